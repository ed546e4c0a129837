"""The project's own files: what a test may read as the project's content.

A full run leaves git-ignored folders inside the tree (the host matrix's virtualenvs in
``tests/hosts/.venvs/``, ``.venv/``, ``benchmarks/out/``), full of other projects' files, some
not UTF-8. A test that globs ``tests/**/test_*.py`` reached them and failed the next inner loop
(#26). So every test that walks the tree asks here: the files git tracks, plus new files
``git`` does not ignore (a module written but not yet added still counts). Outside a git
checkout (an unpacked sdist) hidden folders, ``__pycache__`` and build output are skipped.
"""

from __future__ import annotations

import fnmatch
import os
import subprocess
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_SKIPPED = {"__pycache__", "build", "dist", "node_modules"}


@cache
def _listed() -> tuple[str, ...]:
    """Every project file, relative to ``ROOT`` with ``/`` separators."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return tuple(_walked())
    return tuple(sorted({p for p in out.decode("utf-8", "surrogateescape").split("\0") if p}))


def _walked() -> list[str]:
    found = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in _SKIPPED
                   and not d.endswith(".egg-info")]
        found += [Path(folder, f).relative_to(ROOT).as_posix() for f in files]
    return sorted(found)


def tracked(folder: Path, pattern: str = "*", *, recursive: bool = True) -> list[Path]:
    """The project's files under ``folder`` whose name matches ``pattern`` (``recursive``:
    at any depth, else directly in it), sorted; a file deleted from the tree is left out."""
    prefix = folder.resolve().relative_to(ROOT).as_posix()
    prefix = "" if prefix == "." else prefix + "/"
    found = []
    for path in _listed():
        if not path.startswith(prefix):
            continue
        rest = path[len(prefix):]
        if (recursive or "/" not in rest) and fnmatch.fnmatchcase(rest.rsplit("/", 1)[-1],
                                                                  pattern):
            file = ROOT / path
            if file.is_file():
                found.append(file)
    return found
