"""``search`` and ``sort`` of the bundle list (docs/api.md, "Bundles"), as a django-filter
FilterSet."""

from __future__ import annotations

from dataclasses import dataclass

import django_filters
from django import forms
from django.db.models import F, OrderBy
from drf_spectacular.utils import extend_schema_field
from rest_framework.exceptions import ErrorDetail

from bundles.models import Bundle, CodePointOrder

SEARCH_MAX_LENGTH = 200
DEFAULT_SORT = "-createdAt"
# Wire name -> what the rows are ordered by. ``name`` is the lower-cased name in code-point
# order, the same expression the (org, name_lower) index holds.
SORT_KEYS = {
    "name": lambda: CodePointOrder(F("name_lower")),
    "createdAt": lambda: F("created_at"),
    "updatedAt": lambda: F("updated_at"),
}


@dataclass(frozen=True)
class SortKey:
    field: str
    descending: bool


def parse_sort(value: str) -> list[SortKey]:
    """The sort keys a ``sort`` value spells, each field once (its first occurrence decides).

    Raises ``forms.ValidationError`` for an empty item (``name,``, ``,``, ``-``) or an
    unknown field (wire names only, case-sensitive, no spaces: ``--name`` is unknown).
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
        if field not in SORT_KEYS:
            raise forms.ValidationError(
                "Unknown sort field %(field)s; use name, createdAt or updatedAt, each "
                "optionally prefixed with '-' for descending order.",
                code="unknown_field",
                params={"field": repr(field[:50])},
            )
        if field not in seen:
            seen.add(field)
            keys.append(SortKey(field, descending))
    return keys


def order_by_expressions(keys: list[SortKey]) -> list[OrderBy]:
    """``ORDER BY`` of the keys, then the id in the direction of the last key, so that the
    order is total (stable paging) and each single-field sort is one index read either way."""
    expressions = [
        SORT_KEYS[key.field]().desc() if key.descending else SORT_KEYS[key.field]().asc()
        for key in keys
    ]
    id_key = F("id").desc() if keys[-1].descending else F("id").asc()
    return [*expressions, id_key]


class SortFormField(forms.Field):
    """Absent means the default order; present, even empty, must be a valid list."""

    def to_python(self, value) -> list[SortKey]:
        return parse_sort(DEFAULT_SORT if value is None else str(value))


class SortFilter(django_filters.Filter):
    field_class = SortFormField

    def filter(self, qs, value: list[SortKey]):
        return qs.order_by(*order_by_expressions(value))


SEARCH_SCHEMA = {
    "type": "string",
    "maxLength": SEARCH_MAX_LENGTH,
    "pattern": "^[^\\u0000]*$",  # a NUL is refused, as in every text field
    "description": "Case-insensitive substring of the name. `%`, `_` and `\\` match "
    "themselves. Matched as given (not trimmed); empty means no filter.",
}
SORT_SCHEMA = {
    "type": "string",
    "default": DEFAULT_SORT,
    "pattern": r"^-?(name|createdAt|updatedAt)(,-?(name|createdAt|updatedAt))*$",
    "description": "Comma-separated fields from `name`, `createdAt`, `updatedAt`, each "
    "optionally prefixed with `-` for descending. `name` orders by the lower-cased name in "
    "code-point order. A field given twice counts once (the first decides). The id is "
    "always the final key. For example `name,-createdAt`.",
}


class BundleFilterSet(django_filters.FilterSet):
    search = extend_schema_field(SEARCH_SCHEMA)(
        django_filters.CharFilter(method="filter_search", max_length=SEARCH_MAX_LENGTH, strip=False)
    )
    sort = extend_schema_field(SORT_SCHEMA)(SortFilter())

    class Meta:
        model = Bundle
        fields: list[str] = []

    def filter_search(self, queryset, name: str, value: str):
        return queryset.search(value)


# The filter set's form fields, built once: a FilterSet and its form deep-copy their filters
# and fields each time they are instantiated.
_FORM_FIELDS = {name: filter_.field for name, filter_ in BundleFilterSet.base_filters.items()}


def read_list_query(data) -> tuple[dict, dict]:
    """``search`` and ``sort`` cleaned as ``BundleFilterSet(data).form`` cleans them, and
    the errors as DRF details by parameter (what ``translate_validation`` makes of them)."""
    cleaned, errors = {}, {}
    for name, field in _FORM_FIELDS.items():
        try:
            cleaned[name] = field.clean(field.widget.value_from_datadict(data, None, name))
        except forms.ValidationError as exc:
            errors[name] = [
                ErrorDetail(error.message % (error.params or ()), code=error.code)
                for error in exc.error_list
            ]
    return cleaned, errors
