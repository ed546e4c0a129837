"""Create (or reuse) one virtualenv per agent framework of the host matrix.

    python tests/hosts/make_venvs.py            # all of them, two installs at a time
    python tests/hosts/make_venvs.py langchain  # just one

The virtualenvs live in ``tests/hosts/.venvs/`` (git-ignored). Each records the pins it was
built from; a rerun with the same pins returns at once, changed pins rebuild that one. A
failed install leaves no record, so the next run tries again. Two MCP paths of one framework
(AutoGen's, CrewAI's) share one virtualenv.

Every build holds an exclusive lock on ``.venvs/<name>.lock`` while it checks and builds:
pytest-xdist workers (and a CI step running this script) may all ask for the same
virtualenv at once; the first builds it, the others wait and then find it ready.
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
import sys
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.hosts.frameworks import BY_NAME, FRAMEWORKS, Framework

STAMP = "matrix-requirements.txt"


def ready(framework: Framework) -> bool:
    """True when the virtualenv exists and was built from the current pins."""
    stamp = framework.venv / STAMP
    return (framework.python.exists() and stamp.exists()
            and stamp.read_text(encoding="utf-8") == "\n".join(framework.requirements))


def build(framework: Framework) -> str:
    """Make ``framework``'s virtualenv; returns a one-line account (raises on failure)."""
    framework.venv.parent.mkdir(parents=True, exist_ok=True)
    with open(framework.venv.with_name(framework.venv.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        return _build(framework)


def _build(framework: Framework) -> str:
    if ready(framework):
        return f"{framework.venv.name}: up to date"
    shutil.rmtree(framework.venv, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(framework.venv)], check=True)
    done = subprocess.run(
        [str(framework.python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
         *framework.requirements],
        capture_output=True, text=True,
    )
    if done.returncode != 0:
        errors = [line for line in done.stderr.splitlines() if "WARNING: Location" not in line]
        raise RuntimeError(f"{framework.venv.name}: pip failed:\n" + "\n".join(errors[-30:]))
    (framework.venv / STAMP).write_text("\n".join(framework.requirements), encoding="utf-8")
    return f"{framework.venv.name}: built"


def ensure(names: Iterable[str] | None = None, parallel: int = 2) -> list[str]:
    """Build every named framework's virtualenv that is missing or stale."""
    chosen = [BY_NAME[name] for name in names] if names is not None else list(FRAMEWORKS)
    chosen = list({framework.venv: framework for framework in chosen}.values())
    with ThreadPoolExecutor(max_workers=parallel) as pool:
        return list(pool.map(build, chosen))


if __name__ == "__main__":
    for line in ensure(sys.argv[1:] or None):
        print(line)
