"""Files for the stdout and stderr of the servers a test process starts,
shared by every tests/*/ suite.

Each process (a pytest-xdist worker) keeps them in one directory of its own
under the temporary directory, removed when the process exits. A server a
test kills (SIGKILL, a crash test) never reaches its stop(), which removed
its two files: they were left behind in /tmp, some eighty a `make check`.
"""
import atexit
import os
import shutil
import tempfile

_dir = None


def log_file(prefix):
    """A new empty file named prefix..., in this process's directory."""
    global _dir
    if _dir is None:
        _dir = tempfile.mkdtemp(prefix="newsd-logs-")
        atexit.register(shutil.rmtree, _dir, True)
    fd, path = tempfile.mkstemp(prefix=prefix, dir=_dir)
    os.close(fd)
    return path
