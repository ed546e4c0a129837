"""make_venvs builds each virtualenv once however many processes ask at the same time.

pytest-xdist workers of a fresh clone all reach the host matrix's virtualenvs together; two
builds of one virtualenv at once broke both (issue 19: 38 errors). No pip runs here: the
build's commands are replaced by a stand-in that makes the interpreter file and records
how many builds overlap.
"""

from __future__ import annotations

import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.hosts import frameworks, make_venvs
from tests.hosts.frameworks import Framework


def test_concurrent_asks_build_each_virtualenv_once(monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path) -> None:
    monkeypatch.setattr(frameworks, "VENVS", tmp_path)
    one = Framework("one", ("pkg==1",), "drive_one.py")
    assert one.venv == tmp_path / "one"
    active, most, built = 0, 0, []
    changed = threading.Condition()

    def fake_run(command: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        nonlocal active, most
        with changed:
            active += 1
            most = max(most, active)
            changed.notify_all()
            if "venv" in command:
                built.append(command[-1])
                (Path(command[-1]) / "bin").mkdir(parents=True, exist_ok=True)
                (Path(command[-1]) / "bin" / "python").write_text("")
                # without the lock another ask starts its own build meanwhile; with it,
                # none can, and this waits out its deadline
                changed.wait_for(lambda: active > 1, timeout=1.0)
            active -= 1
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(make_venvs.subprocess, "run", fake_run)
    with ThreadPoolExecutor(max_workers=4) as pool:
        accounts = list(pool.map(lambda _: make_venvs.build(one), range(4)))
    assert built == [str(tmp_path / "one")] and most == 1
    assert sorted(accounts) == ["one: built"] + ["one: up to date"] * 3
    assert make_venvs.ready(one)


def test_paths_sharing_a_virtualenv_are_built_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(make_venvs, "build", lambda f: calls.append(f.venv.name) or "")
    make_venvs.ensure(["autogen-workbench", "autogen-tools", "crewai-mcps"])
    assert sorted(calls) == ["autogen", "crewai"]
