"""The PostgreSQL trigram index of the name search, and the triggers that keep
``BundleTally`` equal to each organization's number of bundles.

The trigram index needs ``pg_trgm`` for the trigrams and ``btree_gin`` so that it can start
with ``org_id`` like every other index of the table: a search then reads only its own
organization's matches from the index, however large the other organizations are. Both are
trusted extensions (PostgreSQL 13+), so a database owner may create them. SQLite gets no
search index: a scan is fine at its scale.

The tally triggers exist on both databases. PostgreSQL's are per statement with transition
tables, so a bulk insert of thousands of rows updates each organization's tally once;
SQLite only has per-row triggers.
"""

from django.db import migrations

from lms.db.migration_operations import RunSQLOn

SEED_TALLY = """
INSERT INTO bundles_bundletally (org_id, total)
SELECT org_id, COUNT(*) FROM bundles_bundle GROUP BY org_id
"""
EMPTY_TALLY = "DELETE FROM bundles_bundletally"

POSTGRES_EXTENSIONS = [
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    "CREATE EXTENSION IF NOT EXISTS btree_gin",
]

POSTGRES_SEARCH_INDEX = """
CREATE INDEX bundle_org_name_trgm_idx ON bundles_bundle
USING gin (org_id, name_lower gin_trgm_ops)
"""

POSTGRES_TRIGGERS = [
    """
    CREATE FUNCTION bundles_tally_added() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO bundles_bundletally AS tally (org_id, total)
        SELECT org_id, COUNT(*) FROM added_bundles GROUP BY org_id
        ON CONFLICT (org_id) DO UPDATE SET total = tally.total + EXCLUDED.total;
        RETURN NULL;
    END
    $$
    """,
    """
    CREATE TRIGGER bundles_tally_added AFTER INSERT ON bundles_bundle
    REFERENCING NEW TABLE AS added_bundles
    FOR EACH STATEMENT EXECUTE FUNCTION bundles_tally_added()
    """,
    """
    CREATE FUNCTION bundles_tally_removed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        UPDATE bundles_bundletally AS tally SET total = tally.total - removed.n
        FROM (SELECT org_id, COUNT(*) AS n FROM removed_bundles GROUP BY org_id) AS removed
        WHERE tally.org_id = removed.org_id;
        RETURN NULL;
    END
    $$
    """,
    """
    CREATE TRIGGER bundles_tally_removed AFTER DELETE ON bundles_bundle
    REFERENCING OLD TABLE AS removed_bundles
    FOR EACH STATEMENT EXECUTE FUNCTION bundles_tally_removed()
    """,
    """
    CREATE FUNCTION bundles_tally_moved() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        UPDATE bundles_bundletally SET total = total - 1 WHERE org_id = OLD.org_id;
        INSERT INTO bundles_bundletally AS tally (org_id, total) VALUES (NEW.org_id, 1)
        ON CONFLICT (org_id) DO UPDATE SET total = tally.total + 1;
        RETURN NULL;
    END
    $$
    """,
    """
    CREATE TRIGGER bundles_tally_moved AFTER UPDATE OF org_id ON bundles_bundle
    FOR EACH ROW WHEN (OLD.org_id IS DISTINCT FROM NEW.org_id)
    EXECUTE FUNCTION bundles_tally_moved()
    """,
    """
    CREATE FUNCTION bundles_tally_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        DELETE FROM bundles_bundletally;
        RETURN NULL;
    END
    $$
    """,
    """
    CREATE TRIGGER bundles_tally_truncated AFTER TRUNCATE ON bundles_bundle
    FOR EACH STATEMENT EXECUTE FUNCTION bundles_tally_truncated()
    """,
]
POSTGRES_DROP_TRIGGERS = [
    f"DROP TRIGGER IF EXISTS bundles_tally_{event} ON bundles_bundle;"
    f" DROP FUNCTION IF EXISTS bundles_tally_{event}()"
    for event in ("added", "removed", "moved", "truncated")
]

SQLITE_TRIGGERS = [
    """
    CREATE TRIGGER bundles_tally_added AFTER INSERT ON bundles_bundle BEGIN
        INSERT INTO bundles_bundletally (org_id, total) VALUES (NEW.org_id, 1)
        ON CONFLICT (org_id) DO UPDATE SET total = total + 1;
    END
    """,
    """
    CREATE TRIGGER bundles_tally_removed AFTER DELETE ON bundles_bundle BEGIN
        UPDATE bundles_bundletally SET total = total - 1 WHERE org_id = OLD.org_id;
    END
    """,
    """
    CREATE TRIGGER bundles_tally_moved AFTER UPDATE OF org_id ON bundles_bundle
    WHEN OLD.org_id IS NOT NEW.org_id BEGIN
        UPDATE bundles_bundletally SET total = total - 1 WHERE org_id = OLD.org_id;
        INSERT INTO bundles_bundletally (org_id, total) VALUES (NEW.org_id, 1)
        ON CONFLICT (org_id) DO UPDATE SET total = total + 1;
    END
    """,
]
SQLITE_DROP_TRIGGERS = [
    f"DROP TRIGGER IF EXISTS bundles_tally_{event}" for event in ("added", "removed", "moved")
]


class Migration(migrations.Migration):
    dependencies = [
        ("bundles", "0001_initial"),
    ]

    operations = [
        # Extensions may be shared with other apps, so going back leaves them installed.
        RunSQLOn("postgresql", POSTGRES_EXTENSIONS, migrations.RunSQL.noop),
        RunSQLOn(
            "postgresql",
            POSTGRES_SEARCH_INDEX,
            "DROP INDEX IF EXISTS bundle_org_name_trgm_idx",
        ),
        migrations.RunSQL(SEED_TALLY, EMPTY_TALLY),
        RunSQLOn("postgresql", POSTGRES_TRIGGERS, list(reversed(POSTGRES_DROP_TRIGGERS))),
        RunSQLOn("sqlite", SQLITE_TRIGGERS, SQLITE_DROP_TRIGGERS),
    ]
