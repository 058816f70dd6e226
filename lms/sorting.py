"""The ``sort`` parameter of a list (CONTRACT 4.5's rules for the bundles; the lists after
it share them, docs/api.md "Bundles"): a comma-separated list of wire field names, each
optionally prefixed by ``-``."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from django import forms


@dataclass(frozen=True)
class SortKey:
    field: str
    descending: bool


def _spelled(fields: Collection[str]) -> str:
    """The fields as a sentence lists them: ``a, b or c``."""
    names = list(fields)
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def parse_sort(value: str, fields: Collection[str]) -> list[SortKey]:
    """The sort keys a ``sort`` value spells, each field once (its first occurrence decides).

    Raises ``forms.ValidationError`` for an empty item (``name,``, ``,``, ``-``) or a field
    not in ``fields`` (wire names only, case-sensitive, no spaces: ``--name`` is unknown).
    """
    keys: list[SortKey] = []
    seen: set[str] = set()
    for position, item in enumerate(value.split(","), start=1):
        descending = item.startswith("-")
        field = item[1:] if descending else item
        if not field:
            raise forms.ValidationError(
                "Sort item %(position)s is empty; write fields separated by single commas.",
                code="empty_item",
                params={"position": position},
            )
        if field not in fields:
            raise forms.ValidationError(
                "Unknown sort field %(field)s; use %(fields)s, each optionally prefixed with "
                "'-' for descending order.",
                code="unknown_field",
                params={"field": repr(field[:50]), "fields": _spelled(fields)},
            )
        if field not in seen:
            seen.add(field)
            keys.append(SortKey(field, descending))
    return keys
