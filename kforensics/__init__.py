"""kforensics: forensics for Apache Kafka broker disks."""

import importlib.abc as _abc
import importlib.util as _util
import os as _os
import sys as _sys

__version__ = "0.1.0"

# Installed, `kforensics.parsers` and `kforensics.spark` come from the distribution's package-dir mapping. Run
# from a source checkout (`python -m pytest` or `python -m kforensics` at the repo root, or a Spark worker
# started there), this folder shadows the installed package: then the checkout's sibling `parsers/` and `spark/`
# folders serve as those two subpackages, and nothing else of the checkout does.
_checkout = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
_SUBPACKAGES = ("parsers", "spark")


class _CheckoutSubpackages(_abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: object = None, target: object = None) -> object:
        prefix, _, name = fullname.partition(".")
        if prefix != __name__ or name not in _SUBPACKAGES:
            return None
        folder = _os.path.join(_checkout, name)
        return _util.spec_from_file_location(fullname, _os.path.join(folder, "__init__.py"),
                                             submodule_search_locations=[folder])


if _os.path.isfile(_os.path.join(_checkout, "parsers", "record_batch.py")) and not any(
        isinstance(finder, _CheckoutSubpackages) for finder in _sys.meta_path):
    _sys.meta_path.append(_CheckoutSubpackages())  # last: an installed or editable mapping is found first
