"""``docs/architecture.md`` names only paths and names that exist (issue #22).

The page tells a maintainer where each step of a request lives; a module moved or a method
renamed without it would send the next reader to a file that is not there. So every path
it gives (``fastmcp_progressive/...py``, ``tests/...py``, ``examples/...md`` or a
wing-relative ``access/gate.py``), every ``path.py:Name.attr``, every dotted
``fastmcp_progressive.x.y`` name and every ``test_...`` name is resolved here: the file must
exist, the module import, each attribute be found on it, the test be defined under
``tests/``. A failure names the page's line.
"""

from __future__ import annotations

import importlib
import os
import re
import warnings
from pathlib import Path
from typing import Any

import pytest

from tests.tracked import tracked

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "architecture.md"
PACKAGE = "fastmcp_progressive"
ROOTED = (f"{PACKAGE}/", "tests/", "examples/", "benchmarks/", "docs/")

_TICKED = re.compile(r"`([^`\n]+)`")
_PATH = re.compile(r"^(?P<path>[\w./-]+\.(?:py|md))(?::(?P<names>[\w.]+))?$")
_FROM = re.compile(rf"\bfrom ({PACKAGE}[\w.]*) import ([\w, ]+)")
_FOLDER = re.compile(r"^(?:tests|examples|benchmarks|docs|fastmcp_progressive)(?:/\w+)*/$")
_TEST = re.compile(r"^test_\w+$")
_DOTTED = re.compile(rf"^{PACKAGE}(\.\w+)+$")
_BARE_PATH = re.compile(rf"(?<![\w/]){PACKAGE}/[\w/]+\.py\b|(?<![\w/])tests/[\w/]+\.py\b")


def _file_of(path: str) -> Path:
    """``path`` in the repository: rooted paths as written, others inside the package."""
    return ROOT / path if path.startswith(ROOTED) else ROOT / PACKAGE / path


def _has(obj: Any, name: str) -> tuple[bool, Any]:
    """Whether ``obj`` has ``name`` as an attribute, or as a declared (annotated) field."""
    try:
        return True, getattr(obj, name)
    except AttributeError:
        pass
    for klass in getattr(obj, "__mro__", ()):
        if name in getattr(klass, "__annotations__", {}):
            return True, None
    return False, None


def _resolve(module_name: str, names: list[str]) -> str | None:
    """None when ``module_name`` imports and has the attribute chain ``names``, else why not."""
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        return f"{module_name} does not import ({exc})"
    where = module_name
    for name in names:
        found, obj = _has(obj, name)
        if not found:
            return f"{where} has no attribute {name!r}"
        if obj is None:
            break  # a declared field: nothing further to follow
        where = f"{where}.{name}"
    return None


def _dotted(name: str) -> str | None:
    """Resolve ``fastmcp_progressive.a.b.C.d``: the longest importable module, then attributes."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                importlib.import_module(module)
        except ImportError:
            continue
        return _resolve(module, parts[cut:])
    return f"no module of {name} imports"


def _test_names() -> set[str]:
    """Every test function defined under ``tests/`` (its tracked files: not the host
    matrix's virtualenvs, which a full run leaves there)."""
    names: set[str] = set()
    for file in tracked(ROOT / "tests", "test_*.py"):
        names.update(re.findall(r"^\s*(?:async )?def (test_\w+)", file.read_text("utf-8"), re.M))
    return names


def problems(text: str, *, ours_only: bool = False) -> list[str]:
    """Every path or name in ``text`` (the page's Markdown) that does not resolve.

    ``ours_only``: only rooted paths and dotted names of the package (the README also names
    other projects' files, ``cli/client.py`` of FastMCP, which no rule here can place)."""
    found: list[str] = []
    tests = _test_names()
    for number, line in enumerate(text.splitlines(), 1):
        for path in _BARE_PATH.findall(line):
            if not _file_of(path).is_file():
                found.append(f"line {number}: {path} does not exist")
        for module, imported in _FROM.findall(line):
            for name in filter(None, (n.strip() for n in imported.split(","))):
                if (why := _dotted(f"{module}.{name}")) is not None:
                    found.append(f"line {number}: from {module} import {name}: {why}")
        for token in _TICKED.findall(line):
            if (match := _PATH.match(token)) is not None:
                if ours_only and not match["path"].startswith(f"{PACKAGE}/"):
                    continue
                file = _file_of(match["path"])
                if not file.is_file():
                    found.append(f"line {number}: {match['path']} does not exist")
                    continue
                if match["names"] and file.is_relative_to(ROOT / PACKAGE):
                    module = ".".join(file.relative_to(ROOT).with_suffix("").parts)
                    module = module.removesuffix(".__init__")
                    if (why := _resolve(module, match["names"].split("."))) is not None:
                        found.append(f"line {number}: `{token}`: {why}")
            elif _DOTTED.match(token) and (why := _dotted(token)) is not None:
                found.append(f"line {number}: `{token}`: {why}")
            elif _FOLDER.match(token) and not ours_only and not (ROOT / token).is_dir():
                found.append(f"line {number}: {token} is not a folder")
            elif _TEST.match(token) and not ours_only and token not in tests:
                found.append(f"line {number}: no test named {token} under tests/")
    return found


def test_every_path_and_name_on_the_page_exists() -> None:
    assert problems(PAGE.read_text(encoding="utf-8")) == []


USER_DOCS = ["README.md", "examples/authoring.md", "benchmarks/README.md",
             *(p.relative_to(ROOT).as_posix() for p in tracked(ROOT / "docs", "*.md")
               if p != PAGE)]
"""The README and the pages beside it: what users are shown."""


@pytest.mark.parametrize("doc", USER_DOCS)
def test_the_module_paths_users_are_shown_exist(doc: str) -> None:
    """The import paths the README and its companions document (``from
    fastmcp_progressive.proxy import progressive_proxy``) are real."""
    text = (ROOT / doc).read_text(encoding="utf-8")
    assert problems(text, ours_only=True) == []


def _slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def broken_links(doc: Path) -> list[str]:
    """Each relative link of ``doc`` to a file that is not there, or to a heading its
    target lacks (the README's sections moved to ``docs/``: a link left behind is caught)."""
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", doc.read_text(encoding="utf-8")):
        if re.match(r"^[a-z]+:", target):
            continue  # https:, mailto:
        path, _, anchor = target.partition("#")
        file = (doc.parent / path).resolve() if path else doc
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md":
            headings = re.findall(r"^#+ (.+)$", file.read_text(encoding="utf-8"), re.M)
            if anchor not in {_slug(h) for h in headings}:
                broken.append(f"{target}: no such heading")
    return broken


@pytest.mark.parametrize("doc", [*USER_DOCS, PAGE.relative_to(ROOT).as_posix()])
def test_every_link_of_the_docs_leads_somewhere(doc: str) -> None:
    assert broken_links(ROOT / doc) == []


def test_the_page_links_the_user_docs_of_each_wing() -> None:
    linked = re.findall(r"\]\((\w[\w-]*\.md)#[\w-]+\)", PAGE.read_text(encoding="utf-8"))
    assert linked, "the wings table links the pages that document each wing"


def test_the_readme_fits_on_a_few_screens() -> None:
    """The front door (#26): what it is, the install, the one line, what a client sees and
    the two commands; the rest lives in ``docs/``."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 300
    first_screen = "\n".join(readme.splitlines()[:60])
    assert "pip install ." in first_screen
    assert 'mcp.add_middleware(ProgressiveDisclosure(descriptions_dir="tool_descriptions"))' in (
        first_screen)
    assert "pip install fastmcp-progressive" not in readme  # no release to install yet


def test_the_internals_table_is_the_imports() -> None:
    """The page's table of who calls which ``fastmcp_internals`` function equals the code's
    imports: a new touch of FastMCP's internals shows up on the page, where reviewers look."""
    import ast

    section = PAGE.read_text(encoding="utf-8").split("## Where FastMCP internals", 1)[1]
    rows = "\n".join(line for line in section.split("\n## ", 1)[0].splitlines()
                     if line.startswith("|"))
    on_page = {
        path: set(re.findall(r"`(\w+)`", names))
        for path, names in re.findall(r"`([\w/]+\.py)` \(([^)]*)\)", rows)
    }
    in_code: dict[str, set[str]] = {}
    for file in tracked(ROOT / PACKAGE, "*.py"):
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == f"{PACKAGE}.fastmcp_internals":
                path = file.relative_to(ROOT / PACKAGE).as_posix()
                in_code.setdefault(path, set()).update(a.name for a in node.names)
    assert on_page == in_code


def test_the_page_names_the_wings_and_the_ranks_test() -> None:
    text = PAGE.read_text(encoding="utf-8")
    for wing in ("files", "access", "disclosure", "resolution", "proxy", "cli"):
        assert f"`{PACKAGE}.{wing}`" in text, wing
    assert "tests/architecture/test_import_direction.py" in text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("see `access/gate.py`", []),
        ("see `gate.py`", ["line 1: gate.py does not exist"]),
        ("in fastmcp_progressive/access/gone.py", ["fastmcp_progressive/access/gone.py"]),
        ("`access/gate.py:Gate.decide`", []),
        ("`access/gate.py:Gate.chooses`", ["has no attribute 'chooses'"]),
        ("`access/caller.py:Caller.kind`", []),  # a dataclass field without a default
        ("`fastmcp_progressive.hosts.HOST_PROFILES`", []),
        ("`fastmcp_progressive.proxy.progressive_proxy`", []),  # a lazy re-export
        ("`fastmcp_progressive.disclosure.nowhere`", ["has no attribute 'nowhere'"]),
        ("`fastmcp_progressive.proxy.front.Nope`", ["has no attribute 'Nope'"]),
        ("`examples/authoring.md`", []),
        ("from fastmcp_progressive.proxy import serve, progressive_proxy", []),
        ("from fastmcp_progressive.proxy.front import nothing", ["import nothing"]),
        ("`test_no_import_circle`", []),
        ("`tests/conformance/`", []),
        ("`tests/nowhere/`", ["tests/nowhere/ is not a folder"]),
        ("`test_no_such_thing`", ["no test named test_no_such_thing"]),
    ],
)
def test_the_check_finds_what_it_looks_for(text: str, expected: list[str]) -> None:
    found = problems(text)
    assert len(found) == len(expected), found
    for problem, part in zip(found, expected, strict=True):
        assert part in problem


def test_the_checks_read_no_file_git_ignores() -> None:
    """After a full run the host matrix's git-ignored virtualenvs hold other projects'
    ``test_*.py`` files, some not UTF-8; the page's checks once read them and the next
    inner loop failed (#26). A file there is neither read nor counted."""
    probe = ROOT / "tests" / "hosts" / ".venvs" / f"probe-{os.getpid()}" / "test_probe.py"
    probe.parent.mkdir(parents=True, exist_ok=True)
    try:
        probe.write_bytes(b"def test_only_in_an_ignored_folder():\n    pass  # \xff\xfe\n")
        assert "test_only_in_an_ignored_folder" not in _test_names()
        assert problems("`test_only_in_an_ignored_folder`") != []
    finally:
        probe.unlink()
        probe.parent.rmdir()
