"""Work done once per test run, however pytest-xdist spreads the tests that need it.

pytest-xdist may hand tests of one file to more than one worker, and sets a worker's
session fixtures up again whenever its queue runs dry; a fixture that drives real
processes for a minute (the host matrix, the benchmark smoke run) would then run several
times. ``kept_result`` gives such a fixture a JSON file every worker of the run shares,
under an exclusive lock: the first to get it does the work and writes the file, the
others wait and read it.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def kept_result(tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[Path]:
    """Hold this run's lock for ``name`` and yield the path of its JSON file (which may not
    exist yet); the lock is released when the block ends."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        yield shared / f"{name}.json"
