"""Spies: tests count what production code does without counters living in it.

A spy wraps a function or method (through ``monkeypatch``, so it is undone after the
test) and counts calls; ``batch_handled`` tells a test when the watcher thread has
finished handling a change to a given file, through the watcher's public ``on_change``.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Collection
from types import ModuleType
from typing import Any

import pytest

from fastmcp_progressive.files.watcher import DirectoryWatcher


class Calls:
    """How often the spied-on callable ran."""

    def __init__(self) -> None:
        self.count = 0
        self._lock = threading.Lock()  # a watcher or preload thread may call it too

    def add(self) -> None:
        with self._lock:
            self.count += 1


def count_calls(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> Calls:
    """Wrap ``owner.name`` (a module function or an object's method) with a counter."""
    original: Callable[..., Any] = getattr(owner, name)
    calls = Calls()

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.add()
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, spy)
    return calls


def count_calls_everywhere(monkeypatch: pytest.MonkeyPatch, owner: ModuleType, name: str,
                           package: str = "fastmcp_progressive") -> Calls:
    """Wrap the function ``owner.name`` with a counter wherever ``package``'s modules imported
    it by name (``from owner import name`` binds a copy a plain ``count_calls`` misses)."""
    original: Callable[..., Any] = getattr(owner, name)
    calls = Calls()

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.add()
        return original(*args, **kwargs)

    for module_name, module in list(sys.modules.items()):
        if module_name.startswith(package) and getattr(module, name, None) is original:
            monkeypatch.setattr(module, name, spy)
    return calls


def batch_handled(monkeypatch: pytest.MonkeyPatch, watcher: DirectoryWatcher,
                  names: Collection[str]) -> threading.Event:
    """An event set once the watcher has handled a batch naming one of ``names``
    (or one meaning "anything may have changed")."""
    done = threading.Event()
    original = watcher.on_change

    def spy(changed: frozenset[str] | None) -> None:
        original(changed)
        if changed is None or not changed.isdisjoint(names):
            done.set()

    monkeypatch.setattr(watcher, "on_change", spy)
    return done
