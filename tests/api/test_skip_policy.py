"""The skip policy itself (tests/skip_policy.py, issue 29 item 3): every skip
is listed with its reason, a missing precondition fails when CI=true, a
by-design exclusion never does. Run on a throwaway suite in a subprocess."""
import os
import subprocess
import sys

import pytest

from harness import REPO

SUITE = '''
import pytest

def test_needs_a_tool():
    pytest.skip("frobnicator not installed")

@pytest.mark.skipif(True, reason="no root here")
def test_needs_root():
    pass

@pytest.mark.by_design(True, reason="runs only in the other configuration")
def test_other_configuration():
    pass

@pytest.mark.by_design(False, reason="not this time")
def test_runs():
    pass
'''

CONFTEST = '''
import sys
sys.path.insert(0, %r)
import skip_policy

def pytest_configure(config):
    skip_policy.install(config)
''' % os.path.join(REPO, "tests")


def run_suite(tmp_path, ci, workers=None):
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_suite.py").write_text(SUITE)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci:
        env["CI"] = "true"
    args = ["-n", str(workers)] if workers else []
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"] + args
                       + [str(tmp_path)], cwd=str(tmp_path), env=env, capture_output=True,
                       text=True, timeout=120)
    return p.returncode, p.stdout + p.stderr


# make check runs tests/api with pytest-xdist (-n): there the reports are
# made in the workers and the summary is the controller's.
WORKERS = [None, 2]


def needs_xdist(workers):
    if workers:
        pytest.importorskip("xdist", reason="python3-pytest-xdist (scripts/install-deps.sh "
                                            "--test) runs make check's API suites in parallel")


@pytest.mark.parametrize("workers", WORKERS)
def test_every_skip_is_listed_with_its_reason(tmp_path, workers):
    needs_xdist(workers)
    rc, out = run_suite(tmp_path, ci=False, workers=workers)
    assert rc == 0, out
    assert "1 passed, 3 skipped" in out, out
    for reason in ("frobnicator not installed", "no root here",
                   "by design: runs only in the other configuration"):
        assert reason in out, out
    assert "skips: 1 by design" in out and "2 for a missing precondition" in out, out


@pytest.mark.parametrize("workers", WORKERS)
def test_with_ci_a_missing_precondition_fails_and_a_by_design_skip_does_not(tmp_path, workers):
    needs_xdist(workers)
    rc, out = run_suite(tmp_path, ci=True, workers=workers)
    assert rc != 0, out
    assert "FAILED" in out and "test_needs_a_tool" in out, out
    assert "ERROR" in out and "test_needs_root" in out, out
    assert "1 failed, 1 passed, 1 skipped, 1 error" in out, out
    assert "by design: runs only in the other configuration" in out, out
    assert "skips: 1 by design" in out and "2 for a missing precondition (failures: CI=true)" \
        in out, out
