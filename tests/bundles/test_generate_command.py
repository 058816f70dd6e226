"""manage.py generate_bundles: bulk loads of realistic bundles, with clear errors."""

import uuid
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from bundles.models import Bundle
from bundles.wire_reads import total_for

pytestmark = pytest.mark.django_db


def generate(*args) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("generate_bundles", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_generates_the_count_in_batches_with_progress(org):
    out, err = generate("--org", str(org.id), "--count", "1234", "--batch-size", "500")
    assert Bundle.all_orgs.for_org(org).count() == 1234 == total_for(org)
    assert "Added 1,234 bundles" in out
    progress = err.strip().splitlines()
    assert len(progress) == 3  # one line per batch when stderr is not a terminal
    assert progress[-1].startswith("[" + "#" * 30 + "] 100% 1,234/1,234")


def test_names_are_varied_and_timestamps_spread_over_years(org):
    generate("--org", str(org.id), "--count", "2000", "--seed", "7")
    rows = list(Bundle.all_orgs.for_org(org).values_list("name", "created_at", "updated_at"))
    names = {name for name, _, _ in rows}
    assert len(names) > 1000
    assert sum("Python" in name for name, _, _ in rows) > 100  # a popular topic
    created = sorted(c for _, c, _ in rows)
    assert (created[-1] - created[0]).days > 4 * 365
    assert all(updated >= created for _, created, updated in rows)
    assert 0.2 < sum(u > c for _, c, u in rows) / len(rows) < 0.6


def test_the_same_seed_gives_the_same_names_whatever_the_batch_size(org, other_org):
    generate("--org", str(org.id), "--count", "50", "--seed", "3")
    generate("--org", str(other_org.id), "--count", "50", "--seed", "3", "--batch-size", "7")

    def names(o):
        return list(Bundle.all_orgs.for_org(o).order_by("created_at").values_list("name"))

    assert names(org) == names(other_org)


def test_the_organization_may_be_named_as_in_the_other_commands(org):
    generate("--org", org.name, "--count", "3")
    assert Bundle.all_orgs.for_org(org).count() == 3


@pytest.mark.parametrize(
    "args, message",
    [
        (["--org", "acme", "--count", "5"], "No organization 'acme'"),
        (["--org", str(uuid.uuid4()), "--count", "5"], "No organization '"),
        (["--org", "{org}", "--count", "0"], "--count must be between 1 and"),
        (["--org", "{org}", "--count", "-3"], "--count must be between 1 and"),
        (["--org", "{org}", "--count", "20000000"], "--count must be between 1 and"),
        (["--org", "{org}", "--count", "5", "--batch-size", "0"], "--batch-size must be"),
        (["--org", "{org}", "--count", "many"], "invalid int value"),
        (["--count", "5"], "--org"),
    ],
)
def test_bad_arguments_are_clear_errors(org, args, message):
    args = [a.format(org=org.id) for a in args]
    with pytest.raises(CommandError, match=message):
        generate(*args)
    assert not Bundle.all_orgs.exists()


def test_keeping_timestamps_is_a_matter_of_each_record_not_of_the_field(org):
    """A bulk load keeps its records' own times while any other record saved meanwhile (by
    another thread, say) is stamped as usual: nothing process-wide is switched."""
    from datetime import UTC, datetime

    from bundles.models import Bundle
    from bundles.services import NewBundle, insert_bundles

    old = datetime(2001, 2, 3, tzinfo=UTC)
    [loaded] = insert_bundles(
        org=org, bundles=[NewBundle(name="old one", created_at=old, updated_at=old)]
    )
    fresh = Bundle.objects.create(org=org, name="new one")
    again = Bundle(org=org, name="given times", created_at=old, updated_at=old)
    again.save()
    assert Bundle.all_orgs.get(pk=loaded.pk).created_at == old
    assert fresh.created_at.year >= 2026 and again.created_at.year >= 2026
