"""Stat many files of one folder cheaply: relative to an open directory descriptor.

A listing stats the description file of every tool it lists on every request (that is how
an edit is served by the very next listing without a watcher). Building a ``Path`` per file
and letting the kernel walk the whole folder path each time cost about two thirds of that;
a ``stat`` relative to the folder's descriptor skips both. Opening the descriptor has a cost
of its own that grows with the folder on some file systems (17 ms at 50,000 entries), so
for a few files (``few=True``) plain paths are used instead.

Example:
    ```python
    with stats_in(folder) as stat_file:
        size = stat_file("create_invoice.json").st_size
    ```
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

StatFile = Callable[[str], os.stat_result]


@contextmanager
def stats_in(directory: Path, *, few: bool = False) -> Iterator[StatFile]:
    """A ``stat`` of a plain file name inside ``directory`` (following symlinks, like
    ``os.stat``); raises ``OSError`` as ``os.stat`` does, the folder missing included.
    ``few``: only a few files will be stat'ed (no directory descriptor is opened)."""
    fd: int | None = None
    if not few and os.stat in os.supports_dir_fd:
        try:
            fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except OSError:
            fd = None
    if fd is None:
        prefix = os.path.join(directory, "")
        yield lambda name: os.stat(prefix + name)
        return
    try:
        yield lambda name: os.stat(name, dir_fd=fd)
    finally:
        os.close(fd)
