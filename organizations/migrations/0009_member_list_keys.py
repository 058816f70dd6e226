"""The members list's keys on each membership (``email_key``, ``search_key``: its user's
address and names, lower-cased), their b-tree indexes, and on PostgreSQL the trigram index
of the search (``pg_trgm``, with ``btree_gin`` so that it starts with ``org_id``; both are
trusted extensions, as bundles' search index uses them too)."""

from django.db import migrations, models

import lms.db.collation
from lms.db.migration_operations import RunSQLOn

SEPARATOR = "\x1f"  # organizations.models.SEARCH_SEPARATOR when this was written


def fill_keys(apps, schema_editor):
    """Every membership's keys from its user, lower-cased as Python does."""
    Membership = apps.get_model("organizations", "Membership")
    rows = Membership._base_manager.values_list(
        "id", "user__email", "user__first_name", "user__last_name"
    )
    batch = []
    for membership_id, *fields in rows.iterator(chunk_size=2000):
        lowered = [field.lower() for field in fields]
        batch.append(
            Membership(
                id=membership_id,
                email_key=lowered[0],
                search_key="".join(SEPARATOR + field for field in lowered),
            )
        )
        if len(batch) == 1000:
            Membership._base_manager.bulk_update(batch, ["email_key", "search_key"])
            batch = []
    Membership._base_manager.bulk_update(batch, ["email_key", "search_key"])


POSTGRES_EXTENSIONS = [
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    "CREATE EXTENSION IF NOT EXISTS btree_gin",
]
POSTGRES_SEARCH_INDEX = """
CREATE INDEX membership_org_search_trgm ON organizations_membership
USING gin (org_id, search_key gin_trgm_ops)
"""


class Migration(migrations.Migration):
    dependencies = [
        ("organizations", "0008_organization_name_unique_any_case"),
    ]

    operations = [
        migrations.AddField(
            model_name="membership",
            name="email_key",
            field=models.CharField(default="", editable=False, max_length=254),
        ),
        migrations.AddField(
            model_name="membership",
            name="search_key",
            field=models.TextField(default="", editable=False),
        ),
        migrations.RunPython(fill_keys, migrations.RunPython.noop),
        migrations.AddIndex(
            model_name="membership",
            index=models.Index(
                models.F("org"),
                lms.db.collation.CodePointOrder(models.F("email_key")),
                models.F("id"),
                models.F("email_key"),
                name="membership_org_email",
            ),
        ),
        migrations.AddIndex(
            model_name="membership",
            index=models.Index(
                models.F("org"),
                models.F("role"),
                lms.db.collation.CodePointOrder(models.F("email_key")),
                models.F("id"),
                models.F("email_key"),
                name="membership_org_role_email",
            ),
        ),
        # Extensions may be shared with other apps, so going back leaves them installed.
        RunSQLOn("postgresql", POSTGRES_EXTENSIONS, migrations.RunSQL.noop),
        RunSQLOn(
            "postgresql",
            POSTGRES_SEARCH_INDEX,
            "DROP INDEX IF EXISTS membership_org_search_trgm",
        ),
    ]
