"""What the benchmarks replay: the real catalogs, synthetic ones of any size, the sessions.

The corpus (``../shared/corpus`` or ``$FASTMCP_PROGRESSIVE_CORPUS``) is found and read by
``tests/corpus.py``, shared with the tests. Synthetic catalogs are deterministic (seeded),
shaped like the corpus median (about 1 KB of JSON per tool: verb-noun names, two or three
sentences, 2-6 typed parameters). A session lists, then reads the full definitions of the
few tools it will call: hand-picked per corpus catalog (reviewable), evenly spaced otherwise,
with one search aimed at its first tool for the search transforms.

Example:
    ```python
    github = load_corpus(["github-mcp-server"])[0]
    scenario_for(github).tools(2)        # ['get_file_contents', 'create_pull_request']
    len(synthetic_catalog(1_000).tools)  # 1000
    ```
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tests.corpus import CORPUS_ENV, SUFFIX, catalog_names, catalog_tools, corpus_dir


@dataclass(frozen=True)
class Catalog:
    """One server's tools as its ``tools/list`` returned them (wire-named JSON objects)."""

    name: str
    tools: tuple[dict[str, Any], ...]

    @property
    def names(self) -> list[str]:
        return [tool["name"] for tool in self.tools]

    def tool(self, name: str) -> dict[str, Any]:
        return next(t for t in self.tools if t["name"] == name)


def load_corpus(names: Sequence[str] | None = None) -> list[Catalog]:
    """The named catalogs (all when ``names`` is None), smallest first."""
    chosen = list(names) if names is not None else catalog_names()
    if not chosen:
        raise FileNotFoundError(f"no *{SUFFIX} catalogs in {corpus_dir()} (set {CORPUS_ENV})")
    catalogs = [Catalog(n, tuple(catalog_tools(corpus_dir() / f"{n}{SUFFIX}"))) for n in chosen]
    return sorted(catalogs, key=lambda c: (len(c.tools), c.name))


# -- synthetic catalogs -------------------------------------------------------------------
_VERBS = ("get", "list", "create", "update", "delete", "search", "sync", "export", "archive",
          "restore")
_NOUNS = ("invoice", "customer", "ticket", "repository", "deployment", "dataset", "report",
          "channel", "cluster", "document", "payment", "subscription", "alert", "pipeline")
_PARAMS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("id", {"type": "string", "description": "Unique identifier of the {noun}."}),
    ("owner", {"type": "string", "description": "Account or organisation that owns the {noun}."}),
    ("limit", {"type": "integer", "minimum": 1, "maximum": 100,
               "description": "Maximum number of results to return (1-100)."}),
    ("cursor", {"type": "string", "description": "Pagination cursor from a previous call."}),
    ("status", {"type": "string", "enum": ["open", "closed", "pending", "archived"],
                "description": "Only {noun}s in this state."}),
    ("tags", {"type": "array", "items": {"type": "string"},
              "description": "Labels attached to the {noun}."}),
    ("dry_run", {"type": "boolean", "description": "Validate without changing anything."}),
    ("payload", {"type": "object", "additionalProperties": True,
                 "description": "Fields of the {noun} to write."}),
)


def _synthetic_tool(index: int, rng: random.Random) -> dict[str, Any]:
    verb, noun = rng.choice(_VERBS), rng.choice(_NOUNS)
    properties = {name: {**spec, "description": spec["description"].format(noun=noun)}
                  for name, spec in rng.sample(_PARAMS, rng.randint(2, 6))}
    required = [name for name in properties if rng.random() < 0.4]
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    description = (
        f"{verb.capitalize()} a {noun} in the workspace. "
        f"Use this when the user asks to {verb} one or more {noun}s; results include ids "
        f"that other {noun} tools accept."
        + (" Requires write access." if verb in ("create", "update", "delete") else ""))
    return {"name": f"{verb}_{noun}_{index:05d}", "description": description,
            "inputSchema": schema,
            "annotations": {"readOnlyHint": verb in ("get", "list", "search", "export")}}


def synthetic_catalog(size: int, *, seed: int = 0) -> Catalog:
    """``size`` synthetic tools (same seed and size: same tools)."""
    rng = random.Random(seed)
    return Catalog(f"synthetic-{size}", tuple(_synthetic_tool(i, rng) for i in range(size)))


# -- sessions -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Scenario:
    """The tools a session fetches (in order of use) and its one search."""

    picks: tuple[str, ...]
    regex: str
    query: str

    def tools(self, n: int) -> list[str]:
        return list(self.picks[:n])


_KNOWN: dict[str, Scenario] = {  # open a pull request after reading a file, etc.
    "github-mcp-server": Scenario(
        ("get_file_contents", "create_pull_request", "list_issues", "issue_write", "search_code"),
        "pull.?request", "create a pull request"),
    "azure-mcp": Scenario(
        ("compute_vm_get", "storage_account_get", "storage_blob_get", "keyvault_secret_get",
         "monitor_resource_log_query"), "virtual machine", "get virtual machine details"),
    "notion-mcp-server": Scenario(
        ("API-post-search", "API-retrieve-a-page", "API-patch-page", "API-get-block-children",
         "API-create-a-comment"), "search", "search pages by title"),
    "playwright-mcp": Scenario(
        ("browser_navigate", "browser_click", "browser_snapshot", "browser_type",
         "browser_take_screenshot"), "navigate", "navigate to a URL"),
    "server-everything": Scenario(
        ("echo", "get-sum", "get-tiny-image", "get-resource-links", "get-structured-content"),
        "echo", "echo back the input"),
    "server-filesystem": Scenario(
        ("read_text_file", "write_file", "list_directory", "edit_file", "search_files"),
        "read.*file", "read a text file"),
    "server-memory": Scenario(
        ("create_entities", "search_nodes", "add_observations", "open_nodes", "read_graph"),
        "entit", "create entities in the knowledge graph"),
}
SESSION_SIZES = (2, 5)


def scenario_for(catalog: Catalog) -> Scenario:
    """The hand-picked session for ``catalog``, else five evenly spaced tools."""
    known = _KNOWN.get(catalog.name)
    names = catalog.names
    if known is not None and all(name in names for name in known.picks):
        return known
    picks = tuple(names[:: max(1, len(names) // 5)][:5])
    words = picks[0].replace("_", " ").replace("-", " ")
    return Scenario(picks, words.split()[0], words)


def read_selection(catalog: Catalog, n: int) -> list[str]:
    """``n`` tool names for a description read: the session's picks, then catalog order."""
    chosen = scenario_for(catalog).tools(n)
    chosen += [name for name in catalog.names if name not in chosen][: n - len(chosen)]
    return chosen
