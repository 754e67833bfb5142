"""The Jinja2 environment and the page frame: autoescaping, and a Content-Security-Policy that
allows only this page's own inline style and script (by hash) and data: images, nothing from the
network."""

from __future__ import annotations

import base64
import hashlib
from functools import cache
from importlib.resources import files
from typing import Any

import jinja2
from markupsafe import Markup

from asif_convert._version import __version__

PAGE_SIZE = 200  # events a timeline page shows at once


def _read(name: str) -> str:
    return files(__package__).joinpath("templates", name).read_text(encoding="utf-8")


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


@cache
def environment() -> jinja2.Environment:
    # autoescape for every template, whatever its name: each value from a document is text.
    env = jinja2.Environment(loader=jinja2.PackageLoader(__package__, "templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=False, lstrip_blocks=False)
    env.filters["counted"] = counted
    css, js = _read("view.css"), _read("view.js")
    csp = ("default-src 'none'; "
           f"style-src {_hash(css)}; script-src {_hash(js)}; img-src data:; media-src data:; "
           "base-uri 'none'; form-action 'none'; frame-src 'none'; object-src 'none'")
    # Our own static assets, hashed into the policy: the only markup not escaped.
    env.globals.update(css=Markup(css), js=Markup(js), csp=csp, version=__version__, page_size=PAGE_SIZE)
    return env


def counted(n: int, word: str) -> str:
    """``1 event``, ``2 events``, ``10,000 events``."""
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)
