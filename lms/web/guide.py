"""The API guide (docs/api.md) as the HTML page at /api/docs/guide: a table of contents of
its sections, and an anchor on each heading that the schema's descriptions link to
(``link("report-progress")``).

A heading's anchor is its words before any `` — `` and without the contract's section
numbers in parentheses: "Report progress — `POST /api/learn/progress`" is
``#report-progress``, "Automations (4.7, 7.1, 7.2)" is ``#automations``; a second heading of
the same words gets ``_1``. The page is rendered once per version of the file.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import markdown
from django.conf import settings
from markdown.extensions.toc import slugify_unicode

# The API guide for consumers, which the schema's descriptions link to.
API_GUIDE: Path = settings.BASE_DIR / "docs" / "api.md"
URL = "/api/docs/guide"

_SECTION_NUMBERS = re.compile(r"\s*\([^)]*\d[^)]*\)")

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
body {{ font: 16px/1.5 system-ui, sans-serif; margin: 0; color: #1b1b1b; }}
nav {{ position: fixed; top: 0; bottom: 0; left: 0; width: 19rem; overflow-y: auto;
  padding: 1rem; box-sizing: border-box; border-right: 1px solid #ddd; font-size: 14px; }}
nav ul {{ padding-left: 1rem; margin: 0.2rem 0; }}
main {{ margin-left: 19rem; padding: 1rem 2rem; max-width: 56rem; }}
@media (max-width: 60rem) {{ nav {{ position: static; width: auto; border: 0; }}
  main {{ margin-left: 0; }} }}
pre {{ background: #f6f8fa; padding: 0.75rem; overflow-x: auto; }}
code {{ font-size: 0.9em; }}
table {{ border-collapse: collapse; }} th, td {{ border: 1px solid #ddd; padding: 0.3rem; }}
a.headerlink {{ margin-left: 0.3rem; text-decoration: none; color: #999; }}
:target {{ scroll-margin-top: 0.5rem; background: #fff8c5; }}
</style></head>
<body><nav aria-label="Contents"><strong>Contents</strong>{toc}</nav>
<main>{body}</main></body></html>
"""


def slugify(value: str, separator: str) -> str:
    """A heading's anchor: see the module's docstring."""
    words = _SECTION_NUMBERS.sub("", value.split(" — ")[0])
    return slugify_unicode(words, separator)


def link(anchor: str) -> str:
    """The guide's URL at ``anchor`` (a heading's, as ``slugify`` makes it)."""
    return f"{URL}#{anchor}"


def page() -> str | None:
    """The guide as an HTML page, or None when the file is not installed here."""
    try:
        version = API_GUIDE.stat().st_mtime_ns
    except FileNotFoundError:
        return None
    return _render(version)


@functools.lru_cache(maxsize=1)
def _render(version: int) -> str:
    converter = markdown.Markdown(
        extensions=["fenced_code", "tables", "toc"],
        extension_configs={"toc": {"slugify": slugify, "permalink": "#", "toc_depth": "2-3"}},
    )
    body = converter.convert(API_GUIDE.read_text(encoding="utf-8"))
    return PAGE.format(title="API guide", toc=converter.toc, body=body)
