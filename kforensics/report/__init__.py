"""`kforensics report`: the tables of a finished scan as an incident-review document, one module per section:
`load` (everything shown, from the Parquet tables under OUT with pyarrow, no Spark), `terminal` (rich tables),
`html_page` (one self-contained HTML file: inline CSS and inline SVG, no script and nothing fetched from the
network) and `figures` (matplotlib). The tiered storage, leadership, groups and exactly-once parts are their own
modules (tiered_report.py, leadership_report.py, groups_report.py, eos_report.py).
"""

from __future__ import annotations

from kforensics.report.html_page import GENERATOR, is_report, render_html
from kforensics.report.load import Report, load_report, restart_summary
from kforensics.report.terminal import render_terminal

__all__ = ["GENERATOR", "Report", "is_report", "load_report", "render_html", "render_terminal", "restart_summary"]
