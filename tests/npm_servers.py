"""Third-party MCP servers from the npm registry, pinned, for the proxy tests.

They are installed into ``.npm-servers/`` (git-ignored) at the project root, by
``.ci/run`` (``python -m tests.npm_servers``) or by the first test that needs them. A test
skips only when node or npm is missing on this machine; with
``FASTMCP_PROGRESSIVE_REQUIRE_NODE=1`` (set by ``.ci/run``) it fails instead, so CI
cannot pass without running them.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PREFIX = ROOT / ".npm-servers"
SCOPE = "@modelcontextprotocol"
PINNED = {
    "server-everything": "2026.8.31",
    "server-filesystem": "2026.8.31",
    "server-memory": "2026.8.31",
}
REQUIRE_ENV = "FASTMCP_PROGRESSIVE_REQUIRE_NODE"
INSTALL_TIMEOUT = 600.0


class NodeMissing(RuntimeError):
    """node or npm is not installed, so the npm servers cannot run here."""


def node() -> str | None:
    return shutil.which("node")


def required() -> bool:
    """Whether the npm-server tests must run (CI) rather than skip without node."""
    return os.environ.get(REQUIRE_ENV, "") not in ("", "0")


def entry_point(package: str) -> Path:
    """The JavaScript file npm's ``bin`` link for ``package`` points at."""
    manifest = json.loads((PREFIX / "node_modules" / SCOPE / package / "package.json")
                          .read_text(encoding="utf-8"))
    bin_field = manifest["bin"]
    relative = bin_field if isinstance(bin_field, str) else next(iter(bin_field.values()))
    return (PREFIX / "node_modules" / SCOPE / package / relative).resolve()


def installed_version(package: str, prefix: Path = PREFIX) -> str | None:
    """The version of ``package`` (its full name) installed in ``prefix``, if any."""
    manifest = prefix / "node_modules" / package / "package.json"
    try:
        return str(json.loads(manifest.read_text(encoding="utf-8"))["version"])
    except (OSError, ValueError, KeyError):
        return None


def missing_of(prefix: Path, pinned: Mapping[str, str]) -> list[str]:
    """``name@version`` of each of ``pinned`` (full name -> version) not installed in
    ``prefix`` at its version."""
    return [f"{name}@{version}" for name, version in pinned.items()
            if installed_version(name, prefix) != version]


def missing() -> list[str]:
    """``name@version`` of each pinned server not installed at its pinned version."""
    return missing_of(PREFIX, {f"{SCOPE}/{name}": version for name, version in PINNED.items()})


def ensure_installed() -> dict[str, list[str]]:
    """Install what is missing; the command (``node``, entry point) per server.

    Raises ``NodeMissing`` when node or npm is absent, ``RuntimeError`` when npm fails.
    """
    node_path = node()
    install_into(PREFIX, missing)
    assert node_path is not None  # install_into raised NodeMissing otherwise
    return {name: [node_path, str(entry_point(name))] for name in PINNED}


def install_into(prefix: Path, missing: Callable[[], list[str]]) -> None:
    """``npm install`` into ``prefix`` the ``name@version`` specs ``missing()`` names.

    Raises ``NodeMissing`` when node or npm is absent, ``RuntimeError`` when npm fails or
    leaves something missing. pytest-xdist workers of a fresh clone all get here at once:
    one installs, the others wait for it, then find everything installed (an install seen
    half-done, or two into one prefix, left servers that exited while starting).
    """
    node_path, npm = node(), shutil.which("npm")
    if node_path is None or npm is None:
        raise NodeMissing(
            "node and npm are needed to run the third-party MCP servers "
            f"(missing: {'node' if node_path is None else 'npm'}); "
            "on Debian: apt-get install nodejs npm"
        )
    prefix.mkdir(exist_ok=True)
    with open(prefix / "install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        wanted = missing()
        if wanted:
            done = subprocess.run(
                [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
                 "--save-exact", "--loglevel=error", *wanted],
                capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False,
            )
            if done.returncode != 0 or missing():
                raise RuntimeError(
                    f"npm install {' '.join(wanted)} failed:\n{done.stderr[-2000:]}")


if __name__ == "__main__":
    try:
        commands = ensure_installed()
    except NodeMissing as exc:
        print(exc, file=sys.stderr)
        sys.exit(1)
    for name in PINNED:
        print(f"{SCOPE}/{name}@{installed_version(f'{SCOPE}/{name}')}: "
              f"{' '.join(commands[name])}")
