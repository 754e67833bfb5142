"""Self-contained HTML pages: one session, two documents side by side, a batch manifest.

Pages read documents through the library (load, validate, convert in memory) and draw the ASIF
JSON form. Every string from a document goes through an autoescaping template; each page carries
its CSS and script inline and a Content-Security-Policy that forbids network access."""

from __future__ import annotations

from asif_convert._view._report import report_page, write_pages, write_report, write_report_records
from asif_convert._view.pages import diff_page, session_page

__all__ = ["diff_page", "report_page", "session_page", "write_pages", "write_report", "write_report_records"]
