"""``search`` and ``sort`` of the bundle list (docs/api.md, "Bundles"), as a django-filter
FilterSet."""

from __future__ import annotations

import django_filters
from django import forms
from django.db.models import F, OrderBy
from drf_spectacular.utils import extend_schema_field
from rest_framework.exceptions import ErrorDetail

from bundles.models import Bundle
from lms import sorting
from lms.db.collation import CodePointOrder
from lms.schema import query_parameter
from lms.sorting import SortKey

SEARCH_MAX_LENGTH = 200
DEFAULT_SORT = "-createdAt"
# Wire name -> what the rows are ordered by. ``name`` is the lower-cased name in code-point
# order, the same expression the (org, name_lower) index holds.
SORT_KEYS = {
    "name": lambda: CodePointOrder(F("name_lower")),
    "createdAt": lambda: F("created_at"),
    "updatedAt": lambda: F("updated_at"),
}


def parse_sort(value: str) -> list[SortKey]:
    """The sort keys a ``sort`` value spells (``lms.sorting.parse_sort`` of the list's
    fields)."""
    return sorting.parse_sort(value, SORT_KEYS)


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


# The list's parameters in the schema, as the filter set declares them.
LIST_PARAMETERS = [query_parameter("search", SEARCH_SCHEMA), query_parameter("sort", SORT_SCHEMA)]

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
