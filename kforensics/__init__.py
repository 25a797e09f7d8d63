"""kforensics: forensics for Apache Kafka broker disks."""

import os as _os

__version__ = "0.1.0"

# Installed, `kforensics.parsers` and `kforensics.spark` come from the distribution's package-dir
# mapping. Run from a source checkout (`python -m pytest` or `python -m kforensics` at the repo root,
# or a Spark worker started there), this folder shadows the installed package, so let the sibling
# `parsers/` and `spark/` folders serve as its subpackages.
_checkout = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
if _os.path.isfile(_os.path.join(_checkout, "parsers", "record_batch.py")) and _checkout not in __path__:
    __path__.append(_checkout)
