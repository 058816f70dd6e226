"""How deep a JSON document may nest: the bound the request parser holds every body to
(``lms.web.parsers``), and by which a stored document is read back (``learn.models``'s JSON
text). Not of the HTTP edge: a model reads it too."""

from __future__ import annotations

import re

# Arrays and objects inside one another, the body itself counting as one (CONTRACT section
# 5). Far above what a client sends (a report is two or three levels deep) and far below
# Python's recursion limit, which every later reader (json, the admin's pretty printer, the
# database driver) shares, and orjson's 255 levels, which renders the answers.
MAX_JSON_DEPTH = 100


def nested_too_deep(text: str) -> bool:
    """Whether the JSON ``text`` nests arrays and objects deeper than ``MAX_JSON_DEPTH``.

    Counting brackets is done in C and settles every ordinary document. Otherwise strings are
    cut out (a regular expression, also in C) and only the brackets left are walked."""
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH:
        return False
    depth = 0
    for bracket in _BRACKET.findall(_STRING.sub("", text)):
        depth += 1 if bracket in "[{" else -1
        if depth > MAX_JSON_DEPTH:
            return True
    return False


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")
