"""What a typical session does on each catalog: which tools it fetches, what it searches.

A session lists the tools, then reads the full definitions of the few it will call.
For the corpus catalogs the tools are hand-picked for a plausible task (fixed here so the
numbers are reproducible and reviewable); any other catalog falls back to evenly spaced
names. Search transforms get one search per session: a regex pattern for
``RegexSearchTransform`` and a natural-language query for ``BM25SearchTransform``,
both aimed at the session's first tool.

Example:
    ```python
    s = scenario_for(catalog)
    s.tools(2)        # ['get_file_contents', 'create_pull_request']
    s.regex, s.query  # 'pull.?request', 'create a pull request'
    ```
"""

from __future__ import annotations

from dataclasses import dataclass

from .corpus import Catalog


@dataclass(frozen=True)
class Scenario:
    """The tools a session fetches (in order of use) and its one search."""

    task: str
    picks: tuple[str, ...]
    regex: str
    query: str

    def tools(self, n: int) -> list[str]:
        """The first ``n`` tools of the session (fewer when the catalog is smaller)."""
        return list(self.picks[:n])


_KNOWN: dict[str, Scenario] = {
    "github-mcp-server": Scenario(
        "open a pull request after reading a file",
        ("get_file_contents", "create_pull_request", "list_issues", "issue_write", "search_code"),
        "pull.?request", "create a pull request",
    ),
    "azure-mcp": Scenario(
        "inspect a VM and its storage",
        ("compute_vm_get", "storage_account_get", "storage_blob_get", "keyvault_secret_get",
         "monitor_resource_log_query"),
        "virtual machine", "get virtual machine details",
    ),
    "notion-mcp-server": Scenario(
        "find a page and comment on it",
        ("API-post-search", "API-retrieve-a-page", "API-patch-page", "API-get-block-children",
         "API-create-a-comment"),
        "search", "search pages by title",
    ),
    "playwright-mcp": Scenario(
        "open a page and click a button",
        ("browser_navigate", "browser_click", "browser_snapshot", "browser_type",
         "browser_take_screenshot"),
        "navigate", "navigate to a URL",
    ),
    "server-everything": Scenario(
        "try the demo tools",
        ("echo", "get-sum", "get-tiny-image", "get-resource-links", "get-structured-content"),
        "echo", "echo back the input",
    ),
    "server-filesystem": Scenario(
        "read, then write a file",
        ("read_text_file", "write_file", "list_directory", "edit_file", "search_files"),
        "read.*file", "read a text file",
    ),
    "server-memory": Scenario(
        "record and look up entities",
        ("create_entities", "search_nodes", "add_observations", "open_nodes", "read_graph"),
        "entit", "create entities in the knowledge graph",
    ),
}

SESSION_SIZES = (2, 5)


def scenario_for(catalog: Catalog) -> Scenario:
    """The session used for ``catalog``: the hand-picked one, else evenly spaced tools."""
    known = _KNOWN.get(catalog.name)
    names = catalog.names
    if known is not None and all(name in names for name in known.picks):
        return known
    step = max(1, len(names) // 5)
    picks = tuple(names[::step][:5])
    first = picks[0]
    words = first.replace("_", " ").replace("-", " ")
    return Scenario("evenly spaced tools", picks, words.split()[0], words)


def read_selection(catalog: Catalog, n: int) -> list[str]:
    """``n`` tool names for a description read: the session's picks, then catalog order."""
    chosen = scenario_for(catalog).tools(n)
    for name in catalog.names:
        if len(chosen) >= n:
            break
        if name not in chosen:
            chosen.append(name)
    return chosen
