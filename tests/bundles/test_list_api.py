"""GET /api/bundles (CONTRACT 4.5): paging, search, sort, validation, tenancy, query counts."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bundles.models import Bundle, BundleTally
from bundles.serializers import BundleSerializer
from lms.pagination import PLAIN_BELOW
from organizations.models import Membership
from tests.bundles.conftest import URL
from tests.bundles.factories import T0, add_bundles
from tests.helpers import assert_error, make_member

pytestmark = pytest.mark.django_db

MAX_PAGE = 9007199254740991
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?Z$")

# An independent statement of the contract's order, to check the service against.
SORT_VALUE = {
    "name": lambda b: b.name.lower(),
    "createdAt": lambda b: b.created_at,
    "updatedAt": lambda b: b.updated_at,
}


def expected_order(bundles, sort: str = "-createdAt") -> list[str]:
    """Ids in the contract's order: the fields (first occurrence of each), then the id in
    the direction of the last field."""
    fields, seen = [], set()
    for item in sort.split(","):
        if item.lstrip("-") not in seen:
            seen.add(item.lstrip("-"))
            fields.append(item)
    rows = sorted(bundles, key=lambda b: b.id, reverse=fields[-1].startswith("-"))
    for item in reversed(fields):
        rows.sort(key=SORT_VALUE[item.lstrip("-")], reverse=item.startswith("-"))
    return [str(b.id) for b in rows]


def ids(response) -> list[str]:
    assert response.status_code == 200, response.content[:500]
    return [row["id"] for row in response.json()["rows"]]


def names_of(response) -> list[str]:
    assert response.status_code == 200, response.content[:500]
    return [row["name"] for row in response.json()["rows"]]


def walk(list_bundles, page_size: int, **query) -> list[str]:
    """Every page from the first until an empty one; each must report the same total."""
    seen, page, totals = [], 1, set()
    while True:
        body = list_bundles(page=page, pageSize=page_size, **query).json()
        totals.add(body["total"])
        if not body["rows"]:
            break
        seen += [row["id"] for row in body["rows"]]
        page += 1
    assert len(totals) == 1
    return seen


# --- the envelope and its defaults -----------------------------------------------------


def test_defaults_are_page_one_of_twenty_newest_first(list_bundles, org):
    bundles = add_bundles(org, [f"Bundle {i}" for i in range(25)])
    response = list_bundles()
    body = response.json()
    assert (body["total"], body["page"], body["pageSize"]) == (25, 1, 20)
    assert ids(response) == expected_order(bundles, "-createdAt")[:20]


def test_rows_are_bundle_objects_with_utc_timestamps(list_bundles, org):
    [bundle] = add_bundles(org, ["Python Basics"])
    [row] = list_bundles().json()["rows"]
    assert set(row) == {"orgId", "id", "name", "createdAt", "updatedAt"}
    assert row["orgId"] == str(org.id) and row["id"] == str(bundle.id)
    assert row["name"] == "Python Basics"
    assert TIMESTAMP.match(row["createdAt"]) and TIMESTAMP.match(row["updatedAt"])
    assert row["createdAt"] == "2026-03-01T12:00:00Z"


def test_rows_are_what_the_bundle_serializer_answers(list_bundles, org):
    """The list builds rows from column values; they must read as the serializer's would,
    microseconds included."""
    add_bundles(org, ["Ünïcødé", "Plain"], created=[T0 + timedelta(microseconds=7), T0])
    expected = [dict(BundleSerializer(b).data) for b in Bundle.objects.for_org(org)]
    rows = list_bundles().json()["rows"]
    assert sorted(rows, key=lambda r: r["id"]) == sorted(expected, key=lambda r: r["id"])


@pytest.mark.parametrize("count", [5, PLAIN_BELOW + 5])
def test_deeper_pages_are_what_the_bundle_serializer_answers(list_bundles, org, count):
    """Below ``PLAIN_BELOW`` rows a deeper page is a plain OFFSET; from it on, a window
    chosen by an id-only query, read from the end when nearer the end. Each reads the
    columns as wire text (``lms.db.wire``), as page 1 does."""
    add_bundles(
        org,
        [f"B{i}" for i in range(count)],
        created=[T0 + timedelta(seconds=i, microseconds=i % 3) for i in range(count)],
    )
    expected = {str(b.id): dict(BundleSerializer(b).data) for b in Bundle.objects.for_org(org)}
    for page in (2, count // 2 - 1):
        rows = list_bundles(page=page, pageSize=2).json()["rows"]
        assert len(rows) == 2
        assert rows == [expected[row["id"]] for row in rows]


def test_an_organization_without_bundles_has_an_empty_first_page(list_bundles):
    assert list_bundles().json() == {"rows": [], "total": 0, "page": 1, "pageSize": 20}


@pytest.mark.parametrize(
    "role", [Membership.Role.OWNER, Membership.Role.ADMIN, Membership.Role.INSTRUCTOR]
)
def test_any_member_may_list(api, org, role):
    add_bundles(org, ["One", "Two"])
    member = make_member(org, role)
    assert api.get(URL, token=member.token).json()["total"] == 2


def test_without_a_token_is_401(api):
    assert_error(api.get(URL), 401, "unauthenticated")


def test_other_methods_are_405(api, learner):
    assert_error(api.post(URL, {"name": "x"}, token=learner.token), 405, "method_not_allowed")


def test_unknown_query_parameters_are_ignored(list_bundles, org):
    add_bundles(org, [f"B{i}" for i in range(5)])
    plain = list_bundles().json()
    assert list_bundles(limit=1, offset=3, ordering="name", foo="bar").json() == plain


# --- every bad parameter is a 400 naming it, before any database work --------------------

BAD_PARAMETERS = [
    ("page", "0"),
    ("page", "-1"),
    ("page", "1.5"),
    ("page", "1.0"),
    ("page", "abc"),
    ("page", ""),
    ("page", " 1"),
    ("page", "1_0"),
    ("page", "+1"),
    ("page", "0x10"),
    ("page", "9007199254740992"),
    ("page", "9" * 5000),
    ("pageSize", "0"),
    ("pageSize", "101"),
    ("pageSize", "x"),
    ("pageSize", "-20"),
    ("pageSize", "20.0"),
    ("pageSize", ""),
    ("search", "p" * 201),
    ("search", "nul\x00char"),
    ("sort", "title"),
    ("sort", "name,"),
    ("sort", ","),
    ("sort", "--name"),
    ("sort", "-"),
    ("sort", ""),
    ("sort", "Name"),
    ("sort", "created_at"),
    ("sort", "name, createdAt"),
    ("sort", "name,,createdAt"),
]


@pytest.mark.parametrize("name, value", BAD_PARAMETERS)
def test_bad_parameter_is_a_validation_error_naming_it(
    list_bundles, org, name, value, django_assert_num_queries
):
    add_bundles(org, ["One"])
    with django_assert_num_queries(1):  # the token lookup only
        response = list_bundles(**{name: value})
    body = assert_error(response, 400, "validation_error")
    assert list(body["details"]) == [name]
    assert name in body["message"]


def test_every_bad_parameter_is_named_at_once(list_bundles):
    body = assert_error(
        list_bundles(page="0", pageSize="500", search="s" * 300, sort="size"),
        400,
        "validation_error",
    )
    assert list(body["details"]) == ["page", "pageSize", "search", "sort"]
    assert body["details"]["pageSize"] == ["Ensure this value is less than or equal to 100."]
    assert body["message"] == "Invalid page: Ensure this value is greater than or equal to 1."


@pytest.mark.parametrize(
    "query, message",
    [
        ({"page": "abc"}, "A valid integer is required."),
        ({"page": "9007199254740992"}, "less than or equal to 9007199254740991"),
        ({"search": "s" * 201}, "at most 200 characters (it has 201)"),
        ({"sort": "title"}, "Unknown sort field 'title'"),
        ({"sort": "name,"}, "Sort item 2 is empty"),
    ],
)
def test_validation_messages_say_what_is_wrong(list_bundles, query, message):
    body = assert_error(list_bundles(**query), 400, "validation_error")
    [(_, [detail])] = body["details"].items()
    assert message in detail


# --- bounds -----------------------------------------------------------------------------


@pytest.mark.parametrize("page_size", [1, 100])
def test_page_size_bounds_are_accepted(list_bundles, org, page_size):
    bundles = add_bundles(org, [f"B{i}" for i in range(101)])
    response = list_bundles(pageSize=page_size)
    assert ids(response) == expected_order(bundles)[:page_size]
    assert response.json()["pageSize"] == page_size


@pytest.mark.parametrize("page_size", [1, 20, 100])
def test_the_largest_page_is_empty_with_the_true_total_and_reads_no_rows(
    list_bundles, org, page_size, django_assert_num_queries
):
    add_bundles(org, [f"B{i}" for i in range(3)])
    with django_assert_num_queries(2) as captured:  # token, then the total alone
        response = list_bundles(page=MAX_PAGE, pageSize=page_size)
    assert response.json() == {"rows": [], "total": 3, "page": MAX_PAGE, "pageSize": page_size}
    assert not any("OFFSET" in q["sql"].upper() for q in captured.captured_queries)


def test_largest_page_of_a_search_is_empty_with_the_true_total(list_bundles, org):
    add_bundles(org, ["Python", "Rust", "python 2"])
    body = list_bundles(page=MAX_PAGE, pageSize=100, search="PYTHON").json()
    assert (body["rows"], body["total"]) == ([], 2)


def test_a_page_just_past_the_end_is_empty_with_the_true_total(list_bundles, org):
    bundles = add_bundles(org, [f"B{i}" for i in range(45)])
    last = list_bundles(page=3).json()
    assert [r["id"] for r in last["rows"]] == expected_order(bundles)[40:]
    assert list_bundles(page=4).json() == {"rows": [], "total": 45, "page": 4, "pageSize": 20}


def test_page_numbers_may_have_leading_zeros(list_bundles, org):
    add_bundles(org, [f"B{i}" for i in range(3)])
    assert list_bundles(page="001", pageSize="02").json()["pageSize"] == 2


# --- search -----------------------------------------------------------------------------

SEARCHABLE = [
    "Python Basics",
    "advanced python",
    "PYTHON TESTING",
    "Jython internals",
    "Rust",
    "100% Python",
    "100 Percent",
    "snake_case style",
    "snakeXcase style",
    r"C:\temp tricks",
    "C:temp tricks",
    "Crème brûlée",
]


@pytest.mark.parametrize("term", ["python", "PYTHON", "PyThOn", "ytho"])
def test_search_is_a_case_insensitive_substring(list_bundles, org, term):
    add_bundles(org, SEARCHABLE)
    response = list_bundles(search=term, sort="name", pageSize=100)
    expected = ["100% Python", "advanced python", "Python Basics", "PYTHON TESTING"]
    if term == "ytho":
        expected.insert(2, "Jython internals")
    assert names_of(response) == expected
    assert response.json()["total"] == len(expected)


@pytest.mark.parametrize(
    "term, expected",
    [
        ("%", ["100% Python"]),
        ("0%", ["100% Python"]),
        ("_", ["snake_case style"]),
        ("e_c", ["snake_case style"]),
        ("\\", ["C:\\temp tricks"]),
        ("C:\\t", ["C:\\temp tricks"]),
        ("%_\\", []),
    ],
)
def test_wildcards_in_a_search_match_only_themselves(list_bundles, org, term, expected):
    add_bundles(org, SEARCHABLE)
    response = list_bundles(search=term, sort="name", pageSize=100)
    assert names_of(response) == expected
    assert response.json()["total"] == len(expected)


def test_search_is_not_trimmed(list_bundles, org):
    add_bundles(org, ["Rust", "Learn Rust", "rusty"])
    assert names_of(list_bundles(search=" rust", sort="name")) == ["Learn Rust"]


def test_an_empty_search_lists_everything(list_bundles, org):
    add_bundles(org, ["One", "Two"])
    assert list_bundles(search="").json()["total"] == 2


def test_a_search_of_200_characters_is_accepted(list_bundles, org):
    name = "x" * 200
    add_bundles(org, [name, "y"])
    assert names_of(list_bundles(search=name)) == [name]


def test_search_matches_non_ascii_letters(list_bundles, org):
    add_bundles(org, SEARCHABLE)
    assert names_of(list_bundles(search="brûlée")) == ["Crème brûlée"]


def test_search_folds_the_case_of_non_ascii_letters(list_bundles, org):
    add_bundles(org, ["CRÈME BRÛLÉE", "Crème brûlée", "Creme brulee"])
    assert sorted(names_of(list_bundles(search="brûlée"))) == ["CRÈME BRÛLÉE", "Crème brûlée"]


def test_name_sort_folds_non_ascii_case(list_bundles, org):
    bundles = add_bundles(org, ["Ökonomie", "zulu", "ökonomie", "apple"])
    names = names_of(list_bundles(sort="name"))
    assert names[:2] == ["apple", "zulu"]
    assert names[2:] == [b.name for b in sorted(bundles[0::2], key=lambda b: b.id)]


def test_search_total_counts_all_matches_across_pages(list_bundles, org):
    add_bundles(org, [f"Python {i}" for i in range(30)] + [f"Go {i}" for i in range(30)])
    first = list_bundles(search="python", pageSize=20).json()
    second = list_bundles(search="python", page=2, pageSize=20).json()
    assert (first["total"], second["total"]) == (30, 30)
    assert len(first["rows"]) == 20 and len(second["rows"]) == 10
    assert all("Python" in row["name"] for row in first["rows"] + second["rows"])


# --- sort -------------------------------------------------------------------------------

SORTABLE_NAMES = ["_zebra", "apple", "Banana", "banana", "cherry", "Zulu", "ökonomie", "Apple"]


@pytest.fixture
def sortable(org):
    """Names, creation and update times that each order differently, with ties in all."""
    created = [T0 + timedelta(hours=h) for h in (3, 1, 2, 2, 5, 4, 0, 1)]
    updated = [T0 + timedelta(hours=h) for h in (9, 7, 7, 6, 9, 8, 9, 6)]
    return add_bundles(org, SORTABLE_NAMES, created=created, updated=updated)


@pytest.mark.parametrize(
    "sort", ["name", "-name", "createdAt", "-createdAt", "updatedAt", "-updatedAt"]
)
def test_each_sort_field_both_ways(list_bundles, sortable, sort):
    assert ids(list_bundles(sort=sort, pageSize=100)) == expected_order(sortable, sort)


def test_name_sorts_lower_cased_in_code_point_order(list_bundles, sortable):
    names = names_of(list_bundles(sort="name", pageSize=100))
    # "_" (U+005F) sorts before letters, "ö" (U+00F6) after "z", case is ignored, and
    # equal lower-cased names fall back to the id.
    assert [n.lower() for n in names] == [
        "_zebra",
        "apple",
        "apple",
        "banana",
        "banana",
        "cherry",
        "zulu",
        "ökonomie",
    ]


def test_default_sort_is_newest_first(list_bundles, sortable):
    assert ids(list_bundles(pageSize=100)) == ids(list_bundles(sort="-createdAt", pageSize=100))


@pytest.mark.parametrize(
    "sort",
    ["name,-createdAt", "-updatedAt,name", "createdAt,-name", "-name,updatedAt,createdAt"],
)
def test_multi_field_sort(list_bundles, sortable, sort):
    assert ids(list_bundles(sort=sort, pageSize=100)) == expected_order(sortable, sort)


@pytest.mark.parametrize(
    "sort, same_as",
    [
        ("name,-name", "name"),
        ("-updatedAt,name,updatedAt", "-updatedAt,name"),
        ("createdAt,createdAt", "createdAt"),
    ],
)
def test_a_field_given_twice_counts_once_the_first_deciding(list_bundles, sortable, sort, same_as):
    assert ids(list_bundles(sort=sort, pageSize=100)) == ids(
        list_bundles(sort=same_as, pageSize=100)
    )


# --- stable paging ----------------------------------------------------------------------


@pytest.fixture(params=["plain", "window"])
def paging(request, monkeypatch):
    """Both ways of reading a page: a plain OFFSET (a small organization) and the id-only
    inner query (a large one), chosen by lms.pagination.PLAIN_BELOW."""
    monkeypatch.setattr("lms.pagination.PLAIN_BELOW", 10**9 if request.param == "plain" else 0)
    return request.param


@pytest.fixture
def look_alikes(org):
    """57 bundles with three names (two equal ignoring case) and two timestamps."""
    names = [("Alpha", "alpha", "Beta")[i % 3] for i in range(57)]
    created = [T0 + timedelta(days=i % 2) for i in range(57)]
    return add_bundles(org, names, created=created, updated=[T0] * 57)


@pytest.mark.parametrize(
    "sort",
    ["-createdAt", "createdAt", "name", "-name", "updatedAt", "-updatedAt", "name,-createdAt"],
)
def test_walking_all_pages_yields_every_bundle_once_in_order(
    list_bundles, look_alikes, sort, paging
):
    walked = walk(list_bundles, 7, sort=sort)
    assert walked == expected_order(look_alikes, sort)
    assert len(set(walked)) == 57


def test_walking_the_pages_of_a_search_yields_each_match_once(list_bundles, org, paging):
    bundles = add_bundles(
        org, [("Python", "python", "Go")[i % 3] for i in range(40)], updated=[T0] * 40
    )
    matches = [b for b in bundles if b.name.lower() == "python"]
    walked = walk(list_bundles, 6, search="PYTHON", sort="updatedAt")
    assert walked == expected_order(matches, "updatedAt")


@pytest.mark.parametrize("page", range(1, 10))
def test_each_page_is_its_slice_of_the_whole_order(list_bundles, look_alikes, page, paging):
    """Pages near the end are read backwards from the end; they must still be the slice."""
    whole = expected_order(look_alikes, "name")
    assert ids(list_bundles(sort="name", page=page, pageSize=7)) == whole[(page - 1) * 7 :][:7]


SORTS = ["-createdAt", "createdAt", "name", "-name", "updatedAt", "-updatedAt", "name,-updatedAt"]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    sort=st.sampled_from(SORTS),
    page_size=st.integers(min_value=1, max_value=12),
    page=st.integers(min_value=1, max_value=30),
)
def test_any_page_is_the_slice_of_the_whole_order(
    list_bundles, look_alikes, sort, page_size, page, paging
):
    """Whatever the sort, size and page (forwards, backwards from the end, or past it)."""
    whole = expected_order(look_alikes, sort)
    body = list_bundles(sort=sort, page=page, pageSize=page_size).json()
    assert body["total"] == len(whole)
    assert [r["id"] for r in body["rows"]] == whole[(page - 1) * page_size :][:page_size]


# --- tenancy ----------------------------------------------------------------------------


def test_only_the_callers_organization_is_listed(api, org, other_org, learner, other_owner):
    mine = add_bundles(org, ["Python mine", "Go mine"])
    theirs = add_bundles(other_org, ["Python theirs", "Go theirs", "Rust theirs"])
    body = api.get(URL, token=learner.token, query={"pageSize": 100}).json()
    assert body["total"] == 2 and {r["id"] for r in body["rows"]} == {str(b.id) for b in mine}
    assert {r["orgId"] for r in body["rows"]} == {str(org.id)}
    other = api.get(URL, token=other_owner.token, query={"pageSize": 100}).json()
    assert other["total"] == 3 and {r["id"] for r in other["rows"]} == {str(b.id) for b in theirs}


def test_a_search_never_reaches_another_organization(api, org, other_org, learner):
    add_bundles(other_org, ["Python theirs"] * 5)
    add_bundles(org, ["Python mine"])
    body = api.get(URL, token=learner.token, query={"search": "python"}).json()
    assert body["total"] == 1 and [r["name"] for r in body["rows"]] == ["Python mine"]


def test_deep_pages_never_reach_another_organization(api, org, other_org, learner):
    add_bundles(other_org, [f"Theirs {i}" for i in range(30)])
    mine = add_bundles(org, [f"Mine {i}" for i in range(30)])
    walked = walk(lambda **q: api.get(URL, token=learner.token, query=q), 4, sort="name")
    assert walked == expected_order(mine, "name")


# --- query counts -----------------------------------------------------------------------


@pytest.mark.parametrize("count", [25, 250])
def test_a_full_first_page_reads_its_total_from_the_tally_in_the_same_query(
    list_bundles, org, count, django_assert_num_queries
):
    add_bundles(org, [f"B{i}" for i in range(count)])
    with django_assert_num_queries(2) as captured:  # token, page with the tally
        body = list_bundles().json()
    assert body["total"] == count and len(body["rows"]) == 20
    page_sql = captured.captured_queries[-1]["sql"]
    assert "bundles_bundletally" in page_sql and "COUNT(" not in page_sql.upper()


def test_the_first_page_total_is_the_tally_not_a_count(list_bundles, org):
    """The total comes from the tally (kept by triggers), read with the rows."""
    add_bundles(org, [f"B{i}" for i in range(30)])
    BundleTally.objects.for_org(org).update(total=12345)
    assert list_bundles().json()["total"] == 12345


@pytest.mark.parametrize("count", [5, 19])
def test_a_first_page_that_holds_everything_needs_no_count(
    list_bundles, org, count, django_assert_num_queries
):
    add_bundles(org, [f"B{i}" for i in range(count)])
    with django_assert_num_queries(2):  # token, page
        assert list_bundles().json()["total"] == count


@pytest.mark.parametrize("count", [60, 300])
@pytest.mark.parametrize("page", [2, 3])
def test_later_pages_take_one_total_and_one_page_query(
    list_bundles, org, count, page, django_assert_num_queries
):
    add_bundles(org, [f"B{i}" for i in range(count)])
    with django_assert_num_queries(3):
        assert len(list_bundles(page=page, sort="name").json()["rows"]) == 20


@pytest.mark.parametrize("count", [60, 300])
def test_a_search_takes_one_count_and_one_page_query(
    list_bundles, org, count, django_assert_num_queries
):
    add_bundles(org, [f"Python {i}" for i in range(count)])
    with django_assert_num_queries(3) as captured:
        assert list_bundles(search="python", page=2).json()["total"] == count
    assert "COUNT(" in captured.captured_queries[1]["sql"].upper()


def test_the_last_page_costs_the_same_queries_as_the_first(
    list_bundles, org, django_assert_num_queries
):
    add_bundles(org, [f"B{i}" for i in range(300)])
    with django_assert_num_queries(3):
        assert len(list_bundles(page=15).json()["rows"]) == 20
