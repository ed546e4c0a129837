"""Each wing's ``__init__`` docstring stays its table of contents (issue #22).

A reader opens ``fastmcp_progressive/<wing>/__init__.py`` to learn what the folder holds:
its docstring says in a line what the wing is, what it may import, then a ``Modules:``
paragraph naming each module in double backticks with a clause on its job, and ends with an
``Example:``. A module added to a folder without a word in that paragraph, or a name left
there after its module moved or merged, fails here naming it. Names inside parentheses say
what a module holds (a class, a function), so they are not taken for modules.

And every import an example shows (in any module's docstring, or the README) resolves.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.tracked import tracked

PACKAGE = Path(__file__).resolve().parents[2] / "fastmcp_progressive"
WINGS = sorted({p.parent.name for p in tracked(PACKAGE, "__init__.py")} - {PACKAGE.name})


def _docstring(wing: str) -> str:
    tree = ast.parse((PACKAGE / wing / "__init__.py").read_text(encoding="utf-8"))
    return ast.get_docstring(tree) or ""


def _modules(wing: str) -> set[str]:
    return {p.stem for p in tracked(PACKAGE / wing, "*.py", recursive=False)} - {"__init__"}


def _modules_paragraph(doc: str) -> str:
    _, found, rest = doc.partition("Modules:")
    return rest.split("\n\n", 1)[0] if found else ""


def _outside_parentheses(text: str) -> str:
    kept, depth = [], 0
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(depth - 1, 0)
        elif depth == 0:
            kept.append(char)
    return "".join(kept)


def test_the_wings_are_the_known_six() -> None:
    """A new folder under the package is a new wing: it needs a rank in
    ``test_import_direction.py`` and a docstring that passes the tests below."""
    assert WINGS == ["access", "cli", "disclosure", "files", "proxy", "resolution"]


@pytest.mark.parametrize("wing", WINGS)
def test_the_docstring_names_every_module_of_its_wing(wing: str) -> None:
    paragraph = _modules_paragraph(_docstring(wing))
    assert paragraph, f"fastmcp_progressive/{wing}/__init__.py has no 'Modules:' paragraph"
    unnamed = sorted(m for m in _modules(wing) if f"``{m}``" not in paragraph)
    assert not unnamed, (
        f"fastmcp_progressive/{wing}/__init__.py's docstring does not name {unnamed}: "
        "add each to its 'Modules:' paragraph with a clause on what it holds")


@pytest.mark.parametrize("wing", WINGS)
def test_the_docstring_names_no_module_the_wing_lacks(wing: str) -> None:
    named = set(re.findall(r"``([^`]+)``", _outside_parentheses(
        _modules_paragraph(_docstring(wing)))))
    stale = sorted(named - _modules(wing))
    assert not stale, (
        f"fastmcp_progressive/{wing}/__init__.py's docstring names {stale}, which are not "
        f"modules of fastmcp_progressive/{wing}/ (moved or merged?)")


@pytest.mark.parametrize("wing", WINGS)
def test_the_docstring_ends_with_an_example(wing: str) -> None:
    doc = _docstring(wing)
    assert "\nExample:\n" in doc, f"fastmcp_progressive/{wing}/__init__.py has no Example:"
    after = doc.split("\nExample:\n", 1)[1].splitlines()
    assert all(not line or line.startswith(" ") for line in after), (
        f"fastmcp_progressive/{wing}/__init__.py: the Example: closes the docstring")


IMPORT_LINE = re.compile(r"^\s*from (fastmcp_progressive[\w.]*) import ([\w, ]+?)\s*$", re.M)


def _shown_imports() -> list[tuple[str, str, str]]:
    """(where, module, name) for each one-line ``from fastmcp_progressive... import ...``
    in a module docstring of the package or in the README."""
    texts = {str(p.relative_to(PACKAGE.parent)): ast.get_docstring(ast.parse(
        p.read_text(encoding="utf-8"))) or "" for p in tracked(PACKAGE, "*.py")}
    for doc in [PACKAGE.parent / "README.md", *tracked(PACKAGE.parent / "docs", "*.md")]:
        texts[doc.relative_to(PACKAGE.parent).as_posix()] = doc.read_text(encoding="utf-8")
    return [(where, m.group(1), name.strip())
            for where, text in texts.items()
            for m in IMPORT_LINE.finditer(text)
            for name in m.group(2).split(",") if name.strip()]


def test_every_import_a_docstring_or_the_readme_shows_resolves() -> None:
    """An ``Example:`` is copied as written: a name it imports must be where it says (the
    files wing's example once imported a ``Descriptions`` no module defines)."""
    import importlib
    import warnings

    shown = _shown_imports()
    assert len(shown) >= 10  # the search itself still finds the examples
    broken = []
    for where, module, name in shown:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # an old path still resolves
            try:
                found = hasattr(importlib.import_module(module), name)
            except ImportError:
                found = False
        if not found:
            broken.append(f"{where}: from {module} import {name}")
    assert not broken, "imports shown that do not resolve:\n" + "\n".join(broken)
