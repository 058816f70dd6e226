"""The list's parameters, cleaned by fields built once, answer what the filter set's form
answers (values and messages) for any input."""

from __future__ import annotations

from django.http import QueryDict
from django_filters import utils as filter_utils
from hypothesis import given
from hypothesis import strategies as st

from bundles.filters import BundleFilterSet, read_list_query
from bundles.models import Bundle

WORDS = st.sampled_from(["name", "-name", "createdAt", "-updatedAt", "", "-", "Name", "x" * 60])
SORTS = st.lists(WORDS, max_size=4).map(",".join)
SEARCHES = st.one_of(st.text(max_size=210), st.sampled_from(["a\x00b", "x" * 201, " "]))


def through_the_form(data: QueryDict) -> tuple[dict, dict]:
    filterset = BundleFilterSet(data=data, queryset=Bundle.objects.none())
    if filterset.is_valid():
        return filterset.form.cleaned_data, {}
    return {}, filter_utils.translate_validation(filterset.errors).detail


@given(search=st.none() | SEARCHES, sort=st.none() | SORTS)
def test_same_values_and_messages_as_the_filter_sets_form(search, sort):
    data = QueryDict(mutable=True)
    if search is not None:
        data["search"] = search
    if sort is not None:
        data["sort"] = sort
    cleaned, errors = read_list_query(data)
    expected_cleaned, expected_errors = through_the_form(data)
    assert errors == expected_errors
    assert [(e, e.code) for v in errors.values() for e in v] == [
        (e, e.code) for v in expected_errors.values() for e in v
    ]
    if not errors:
        assert cleaned == expected_cleaned
