"""Fixtures of the reliability suite (its figures are printed by ``tests/conftest.py``)."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import configuration as hypothesis_configuration

from tests.reliability.procs import REDIS_SERVER, RedisServer, Replica

# hypothesis keeps its example database and caches outside the repository
hypothesis_configuration.set_hypothesis_home_dir(
    Path(tempfile.gettempdir()) / "fastmcp-progressive-hypothesis"
)

needs_redis = pytest.mark.skipif(
    REDIS_SERVER is None,
    reason="redis-server is not installed (CI installs it: apt-get install redis-server)",
)


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A fresh redis-server on a free 127.0.0.1 port, stopped (and thawed) afterwards."""
    server = RedisServer(tmp_path / "redis").start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def replicas(tmp_path: Path) -> Iterator[Callable[..., Replica]]:
    """Make replica processes (not started); every one made is stopped afterwards."""
    made: list[Replica] = []

    def make(redis_url: str, *options: str, name: str = "replica", **kw: Any) -> Replica:
        replica = Replica(redis_url, tmp_path, *options, name=name, **kw)
        made.append(replica)
        return replica

    try:
        yield make
    finally:
        for replica in made:
            replica.stop()
