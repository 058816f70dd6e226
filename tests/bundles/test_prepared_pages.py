"""Page 1 of the bundle list is prepared for the organizations known to be small, and
planned for its own values for any other (bundles.wire_reads: ``SMALL_ORGANIZATION``)."""

from __future__ import annotations

import uuid

import pytest

from bundles.filters import parse_sort
from bundles.wire_reads import SMALL, SMALL_ORGANIZATION, first_page, listed
from lms.db.compiled import PrepareWhenSmall
from tests.bundles.factories import add_bundles
from tests.helpers import prepared_statements

pytestmark = pytest.mark.django_db

NAMES = ["Python basics", "python for data", "Cobol masterclass", "Art", "PYTHON again"]


@pytest.fixture(autouse=True)
def unknown_sizes():
    SMALL.clear()
    yield
    SMALL.clear()


def page_reads() -> list[tuple[str, int]]:
    """This connection's prepared page-1 reads (those that answer the tally): their text
    and how often each ran."""
    return prepared_statements('%AS "tally"%')


def expected(org_id, sort: str, search: str, size: int) -> tuple[list, int]:
    """Page 1 and the total as the ORM reads them, with none of the compiled machinery."""
    everything = list(listed(org_id, tuple(parse_sort(sort)), search or None))
    return everything[:size], len(everything)


@pytest.mark.parametrize(
    "sort, search, size",
    [
        ("-createdAt", "", 20),
        ("-createdAt", "", 2),
        ("name,-createdAt", "", 3),
        ("name", "python", 100),
        ("-updatedAt", "python", 2),
        ("name", "zzz", 20),
    ],
)
def test_page_one_answers_the_same_before_and_after_the_size_is_known(org, sort, search, size):
    """The first read (size unknown: planned for its values) and the later ones (known
    small: prepared on PostgreSQL) answer the ORM's rows and total."""
    add_bundles(org, NAMES)
    answers = [first_page(org.id, tuple(parse_sort(sort)), search, size) for _ in range(3)]
    assert SMALL.small(org.id) == (answers[0][1] > 0)
    assert answers == [expected(org.id, sort, search, size)] * 3


@pytest.mark.postgres
def test_a_small_organizations_page_one_is_prepared_from_its_second_read(org):
    add_bundles(org, NAMES)
    sort = tuple(parse_sort("-createdAt"))
    first_page(org.id, sort, "", 2)
    assert page_reads() == []
    for _ in range(3):
        assert first_page(org.id, sort, "", 2) == expected(org.id, "-createdAt", "", 2)
    ((statement, runs),) = page_reads()
    assert runs == 3 and "$1" in statement and org.id.hex not in statement
    # A search with a full page also prepares its count.
    for _ in range(2):
        assert first_page(org.id, sort, "python", 2) == expected(org.id, "-createdAt", "python", 2)
    assert len(page_reads()) == 2
    assert len(prepared_statements("SELECT COUNT(*)%")) == 1


@pytest.mark.postgres
def test_a_large_organization_is_always_planned_for_its_own_values(org):
    add_bundles(org, [f"Bundle {i:04}" for i in range(SMALL_ORGANIZATION + 1)])
    sort = tuple(parse_sort("name"))
    for _ in range(3):
        assert first_page(org.id, sort, "", 20) == expected(org.id, "name", "", 20)
        assert first_page(org.id, sort, "bundle 00", 20) == expected(
            org.id, "name", "bundle 00", 20
        )
    assert not SMALL.small(org.id)
    assert page_reads() == []


@pytest.mark.postgres
def test_an_organization_that_grows_past_the_limit_is_prepared_no_more(org):
    """Its next read is the small organizations' (prepared) one and tells the new size;
    every read after that is planned for its values."""
    add_bundles(org, NAMES)
    sort = tuple(parse_sort("-createdAt"))
    first_page(org.id, sort, "", 20)
    first_page(org.id, sort, "", 20)
    assert [runs for _, runs in page_reads()] == [1]
    add_bundles(org, [f"More {i}" for i in range(SMALL_ORGANIZATION)])
    grown = expected(org.id, "-createdAt", "", 20)
    assert grown[1] == SMALL_ORGANIZATION + len(NAMES)
    assert first_page(org.id, sort, "", 20) == grown
    assert [runs for _, runs in page_reads()] == [2]
    assert not SMALL.small(org.id)
    assert first_page(org.id, sort, "", 20) == grown
    assert [runs for _, runs in page_reads()] == [2]


def test_known_sizes_keeps_a_bounded_number_of_organizations():
    sizes = PrepareWhenSmall(key="org_id", limit=SMALL_ORGANIZATION, remember=4)
    orgs = [uuid.uuid4() for _ in range(5)]
    for size, org_id in enumerate(orgs):
        sizes.note(org_id, size)
    assert [sizes.small(org_id) for org_id in orgs] == [False, False, True, True, True]
    sizes.note(orgs[2], SMALL_ORGANIZATION + 1)
    assert not sizes.small(orgs[2])
    sizes.note(orgs[2], SMALL_ORGANIZATION)
    assert sizes.small(orgs[2])
    assert not sizes.small(uuid.uuid4())
