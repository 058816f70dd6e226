"""BundleTally always equals each organization's number of bundles, however rows change."""

import random
import threading

import pytest
from django.db import connection, transaction

from bundles.models import Bundle, BundleTally
from bundles.wire_reads import total_for
from tests.bundles.factories import add_bundles
from tests.factories import OrganizationFactory

pytestmark = pytest.mark.django_db


def assert_tallies_exact(*orgs):
    for org in orgs:
        assert total_for(org) == Bundle.all_orgs.for_org(org).count(), org


def test_an_organization_without_bundles_has_zero(org):
    assert total_for(org) == 0


def test_bulk_inserts_across_organizations_are_tallied(org, other_org):
    add_bundles(org, ["a", "b", "c"])
    add_bundles(other_org, ["d"])
    add_bundles(org, ["e"])
    assert (total_for(org), total_for(other_org)) == (4, 1)


def test_single_creates_and_deletes_are_tallied(org):
    first = Bundle.objects.create(org=org, name="First")
    Bundle.objects.create(org=org, name="Second")
    first.delete()
    assert total_for(org) == 1


def test_queryset_deletes_are_tallied(org, other_org):
    add_bundles(org, [f"B{i}" for i in range(10)])
    add_bundles(other_org, ["x", "y"])
    Bundle.all_orgs.filter(name__in=["B1", "B2", "B3", "x"]).delete()
    assert (total_for(org), total_for(other_org)) == (7, 1)


def test_moving_bundles_between_organizations_is_tallied(org, other_org):
    add_bundles(org, ["a", "b", "c"])
    Bundle.all_orgs.filter(name__in=["a", "b"]).update(org=other_org)
    assert (total_for(org), total_for(other_org)) == (1, 2)


def test_renaming_does_not_change_the_tally(org):
    add_bundles(org, ["a", "b"])
    Bundle.all_orgs.for_org(org).update(name="renamed")
    assert total_for(org) == 2


def test_deleting_an_organization_leaves_the_others_exact(org, other_org):
    add_bundles(org, ["a", "b"])
    add_bundles(other_org, ["c"])
    org.delete()
    assert not BundleTally.objects.filter(org_id=org.id).exists()
    assert total_for(other_org) == 1


def test_a_rolled_back_insert_is_not_tallied(org):
    add_bundles(org, ["kept"])
    with pytest.raises(RuntimeError), transaction.atomic():
        add_bundles(org, ["gone", "gone too"])
        raise RuntimeError("roll back")
    assert total_for(org) == 1


def test_a_random_mix_of_changes_keeps_every_tally_exact():
    rng = random.Random(20261122)
    orgs = [OrganizationFactory() for _ in range(3)]
    for step in range(120):
        org = rng.choice(orgs)
        action = rng.random()
        if action < 0.5:
            add_bundles(org, [f"n{step}-{i}" for i in range(rng.randint(1, 5))])
        elif action < 0.8:
            victims = list(Bundle.all_orgs.for_org(org).values_list("id", flat=True)[:3])
            Bundle.all_orgs.filter(id__in=victims).delete()
        else:
            moved = list(Bundle.all_orgs.for_org(org).values_list("id", flat=True)[:2])
            Bundle.all_orgs.filter(id__in=moved).update(org=rng.choice(orgs))
    assert_tallies_exact(*orgs)


@pytest.mark.postgres
def test_truncating_the_table_empties_the_tallies(org):
    add_bundles(org, ["a", "b"])
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # no deferred checks pending
        # CASCADE: the bundles' course and download items reference them.
        cursor.execute("TRUNCATE bundles_bundle CASCADE")
    assert total_for(org) == 0


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_inserts_and_deletes_keep_the_tally_exact():
    org = OrganizationFactory()
    add_bundles(org, [f"old {i}" for i in range(40)])
    old_ids = list(Bundle.all_orgs.for_org(org).values_list("id", flat=True))
    barrier = threading.Barrier(4)
    errors = []

    def insert(worker: int):
        try:
            barrier.wait()
            for i in range(15):
                add_bundles(org, [f"w{worker}-{i}"])
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            connection.close()

    def delete(chunk):
        try:
            barrier.wait()
            for bundle_id in chunk:
                Bundle.all_orgs.filter(id=bundle_id).delete()
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=insert, args=(w,)) for w in range(2)]
    threads += [threading.Thread(target=delete, args=(old_ids[i::2],)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert Bundle.all_orgs.for_org(org).count() == 30
    assert_tallies_exact(org)
