"""Upgrades of a PostgreSQL store (issue 30 item 1): as for the embedded
store, only `newsd serve` and `newsd migrate` migrate its schema; any other
command refuses it unchanged and says what to do."""
import re

from conftest import newsd


def pg_schema_current():
    out = newsd("--version")[1]
    m = re.search(r"(\d+) \(PostgreSQL\)", out)
    assert m, out
    return int(m.group(1))


def schema_of(pg, uri):
    return int(pg.psql(uri, "SELECT value FROM newsd_meta WHERE key = 'schema_version'").strip())


def test_a_postgresql_store_is_migrated_only_when_asked(pg):
    """A store one version behind (its version row set back: every
    migration is written to run again harmlessly): keys list refuses it
    and leaves the version; migrate migrates and says from what to what."""
    current = pg_schema_current()
    uri = pg.new_database()
    newsd("keys", "create", "--store", uri, "--name", "before")
    old = current - 1
    pg.psql(uri, "UPDATE newsd_meta SET value = '%d' WHERE key = 'schema_version'" % old)

    rc, _, err = newsd("keys", "list", "--store", uri, check=False)
    assert rc == 1, err
    assert "schema version %d needs migrating to %d" % (old, current) in err, err
    assert "newsd migrate" in err and "stop" in err, err
    assert schema_of(pg, uri) == old

    _, out, err = newsd("migrate", "--store", uri)
    assert "schema migrated from version %d to %d" % (old, current) in out, out
    assert "schema migrated from version %d to %d" % (old, current) in err, err
    assert schema_of(pg, uri) == current
    assert "before" in newsd("keys", "list", "--store", uri)[1]
    assert "nothing to migrate" in newsd("migrate", "--store", uri)[1]
