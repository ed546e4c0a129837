"""Where and with what a run happened, so a reader can judge (and reproduce) its numbers.

Example:
    ```python
    describe()["cpu"]  # 'AMD EPYC 7B13 (2 logical CPUs)'
    ```
"""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path

PACKAGES = ("fastmcp", "mcp", "mcp-types", "fastmcp-progressive", "pydantic", "uvicorn",
            "py-key-value-aio", "bpe-openai", "matplotlib")


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return f"{int(line.split()[1]) / 2**20:.1f} GiB"
    except (OSError, ValueError):
        pass
    return "unknown"


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def _git(repo: Path) -> str:
    try:
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain",
                                "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{head}{' + uncommitted changes' if dirty else ''}"


def describe(repo: Path | None = None) -> dict[str, str]:
    """Machine, OS, interpreter, package versions and source revision of this run."""
    cpus = os.cpu_count() or 0
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cpus
    info = {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": f"{_cpu_model()} ({usable} of {cpus} logical CPUs usable)",
        "memory": _memory(),
        "os": platform.platform(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
    }
    if repo is not None:
        info["revision"] = _git(repo)
    for package in PACKAGES:
        info[package] = _version(package)
    return info
