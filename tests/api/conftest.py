"""Session fixtures: one store built from tests/data/api/, one newsd serving it
with its clock fixed at the fixture's NOW (NEWSD_NOW), stopped with SIGTERM at
the end (it must exit 0 with no sanitizer report, or the session fails)."""
import os
import sys
import types

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import longest_first  # noqa: E402
import skip_policy  # noqa: E402

import openapi_check
from corpus import DATA, Corpus
from harness import BIN, Client, Server, cli_ok, parse_summary


def pytest_configure(config):
    skip_policy.install(config)  # every skip shown; in CI a precondition skip fails


# Modules whose subject does not touch the search backend (ingestion, the
# CLI, webhook delivery, live streams, which match through index/match.c
# whatever the backend, operations): `make api-test-fts5` exists to run the
# searches on FTS5, so it skips them by design, and `make check` stays
# within its time (the release and ASan runs have them all).
BACKEND_INDEPENDENT = {"test_alerts", "test_feeds", "test_feeds_manage", "test_pages",
                       "test_warc", "test_operations", "test_admin_store", "test_proxy",
                       "test_stream", "test_install", "test_demo"}


# The longest modules, longest first (tests/longest_first.py; release run,
# --durations=0 summed by file, 2026-11-28: test_demo ~100 s of ~400 s,
# mostly its fresh clone's build, then test_alerts and test_feeds_manage
# ~50 s each).
LONGEST_FIRST = ["test_demo", "test_alerts", "test_feeds_manage", "test_stream", "test_feeds",
                 "test_pages", "test_startup", "test_quota"]


def pytest_collection_modifyitems(config, items):
    longest_first.sort(config, items, LONGEST_FIRST)
    if os.environ.get("NEWSD_INDEX") != "fts5":
        return
    for item in items:
        if item.module.__name__ in BACKEND_INDEPENDENT:
            item.add_marker(pytest.mark.by_design(
                True, reason="not about the search backend: the release and ASan runs have it"))


def data(name):
    return os.path.join(DATA, name)


@pytest.fixture(scope="session")
def corpus():
    return Corpus()


@pytest.fixture(scope="session")
def store(tmp_path_factory, corpus):
    if not os.access(BIN, os.X_OK):
        pytest.exit("newsd binary not found or not executable: %s (set NEWSD_BIN)" % BIN, 2)
    d = str(tmp_path_factory.mktemp("store"))
    st = types.SimpleNamespace(path=d, keys={})
    st.sources_run = cli_ok("sources", "import", "--create", "--store", d, data("sources.jsonl"))
    st.import_run = cli_ok("import", "--create", "--store", d, data("articles.jsonl"), data("handmade.jsonl"))
    st.update_run = cli_ok("import", "--create", "--store", d, data("updates.jsonl"))
    for name in ("main", "alt", "victim-disable", "victim-delete", "victim-byid"):
        r = cli_ok("keys", "create", "--create", "--store", d, "--name", name)
        key = r.out.strip()
        assert key and len(key.split()) == 1, "keys create must print only the key: %r" % r
        st.keys[name] = key
    st.import_summary = parse_summary(st.import_run.out + "\n" + st.import_run.err)
    st.update_summary = parse_summary(st.update_run.out + "\n" + st.update_run.err)
    return st


@pytest.fixture(scope="session")
def server(store, corpus):
    srv = Server(store.path, now=corpus.now)
    yield srv
    problems = srv.stop()
    assert not problems, "\n".join(problems)


@pytest.fixture(scope="session")
def api(server, store):
    return Client(server.base, store.keys["main"])


@pytest.fixture(scope="session")
def key(store):
    return store.keys["main"]


@pytest.fixture(scope="session", autouse=True)
def openapi_validation():
    """Every response of the session is validated against docs/openapi.json
    (openapi_check.py): the document cannot drift from the code."""
    yield from openapi_check.validating()
