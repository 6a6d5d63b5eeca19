"""The PostgreSQL store's own tests (tests/unit/test_store_pg.c: every store
operation against the embedded store's answers, the article log, atomic
usage takes, feed leases) on a fresh database of the throwaway server."""
import os
import subprocess

import pytest

from conftest import REPO, clean_env

TEST_BIN = os.environ.get("NEWSD_TEST_STORE_PG") or os.path.join(
    REPO, "build", "asan", "tests", "test_store_pg")


def test_the_store_operations_agree_with_the_embedded_store(pg):
    if not os.access(TEST_BIN, os.X_OK):
        pytest.skip("%s not built (make cluster-test builds it)" % TEST_BIN)
    uri = pg.new_database()
    p = subprocess.run([TEST_BIN], cwd=os.path.join(REPO, "tests", "unit"),
                       env=clean_env({"NEWSD_TEST_PG": uri}), capture_output=True, timeout=300)
    out = p.stdout.decode("utf-8", "replace") + p.stderr.decode("utf-8", "replace")
    assert p.returncode == 0, out[-6000:]
    assert "PASSED" in out and "skipped" not in out and "SKIP" not in out, out[-2000:]
