"""``describe_tools({"query": ...})``: tools found by words (``disclosure/search.py``).

A query ranks the tools the caller may see with FastMCP's own BM25 and answers with the
best matches' full definitions, granted like a read, and the next matches one line each;
a hidden tool is never ranked, bad input gets a specific error, no match names the way on,
and an edited description file ranks by its new words.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import mcp_types as mt
import pytest
from fastmcp import Client, FastMCP
from fastmcp.server.auth import require_scopes
from fastmcp.server.auth.providers.jwt import StaticTokenVerifier
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools.base import Tool

from fastmcp_progressive import ListingSettings, ProgressiveDisclosure
from fastmcp_progressive.disclosure import search
from fastmcp_progressive.disclosure.index import singular
from fastmcp_progressive.disclosure.search import (
    ANSWER_CHARS,
    FULL_RESULTS,
    INDEX_BYTES,
    LINE_RESULTS,
    name_words,
)
from fastmcp_progressive.files.store import Definitions, DescriptionStore
from tests.conftest import (
    ERAS,
    TOKENS,
    TRANSPORT_ERA,
    Era,
    Transport,
    answer_of,
    clients,
    gated,
    needs_a_followed_caller,
)
from tests.corpus import catalog_path
from tests.replay import replay_tool
from tests.waiting import until, watcher_ready

GITHUB: list[tuple[str, str, list[str]]] = [
    # a slice of github-mcp-server's catalog (../shared/corpus), descriptions as it has them
    ("create_pull_request", "Create a new pull request in a GitHub repository.",
     ["owner", "repo", "title", "body", "head", "base", "draft", "maintainer_can_modify"]),
    ("create_pull_request_review", "Create a review on a pull request. If event is provided, "
     "the review is submitted immediately; otherwise a pending review is created.",
     ["owner", "repo", "pullNumber", "body", "event", "commitID"]),
    ("merge_pull_request", "Merge a pull request in a GitHub repository.",
     ["owner", "repo", "pullNumber", "commit_title", "commit_message", "merge_method"]),
    ("list_pull_requests", "List pull requests in a GitHub repository. If the user specifies "
     "an author, then DO NOT use this tool and use the search_pull_requests tool instead.",
     ["owner", "repo", "state", "head", "base", "sort", "direction", "perPage", "page"]),
    ("update_pull_request", "Update an existing pull request in a GitHub repository.",
     ["owner", "repo", "pullNumber", "title", "body", "state", "base", "draft"]),
    ("list_issues", "List issues in a GitHub repository. For pagination, use the "
     "'endCursor' from the previous response's 'pageInfo' in the 'after' parameter.",
     ["owner", "repo", "state", "labels", "orderBy", "direction", "since", "after"]),
    ("issue_write", "Create a new or update an existing issue in a GitHub repository.",
     ["method", "owner", "repo", "issue_number", "title", "body", "assignees", "labels"]),
    ("add_issue_comment", "Add a comment to a specific issue in a GitHub repository. Use this "
     "tool to add comments to pull requests as well.", ["owner", "repo", "issue_number", "body"]),
    ("create_branch", "Create a new branch in a GitHub repository",
     ["owner", "repo", "branch", "from_branch"]),
    ("get_file_contents", "Get the contents of a file or directory from a GitHub repository",
     ["owner", "repo", "path", "ref", "sha"]),
    ("fork_repository", "Fork a GitHub repository to your account or specified organization",
     ["owner", "repo", "organization"]),
    ("star_repository", "Star a GitHub repository", ["owner", "repo"]),
]
"""Twelve tools of github-mcp-server: name, description, argument names."""


def github_tool(name: str, description: str, arguments: Sequence[str], **fields: Any) -> Tool:
    """A replayed tool (``fields``: e.g. its ``tags`` or ``auth``)."""
    tool = replay_tool({"name": name, "description": description, "inputSchema": {
        "type": "object", "properties": {a: {"type": "string"} for a in arguments}}})
    return tool.model_copy(update=fields) if fields else tool


def github_server(*, auth: bool = False, middleware: ProgressiveDisclosure | None = None
                  ) -> FastMCP:
    mcp = FastMCP("github", auth=StaticTokenVerifier(tokens=TOKENS) if auth else None)
    for spec in GITHUB:
        mcp.add_tool(github_tool(*spec))
    mcp.add_middleware(middleware or ProgressiveDisclosure())
    return mcp


async def query(client: Client[Any], text: Any, *, bridge: str = "describe_tools",
                **more: Any) -> Any:
    result = await client.call_tool(bridge, {"query": text, **more}, raise_on_error=False)
    body = answer_of(result)
    if result.is_error:  # a refusal: its JSON as text and as structuredContent
        assert result.structured_content == body
        return {"is_error": True, **body}
    assert result.structured_content is None  # an answer: its JSON once, as text
    return body


def first(body: Any) -> str | None:
    """The best match an answer gives (its first tool), or None."""
    return next(iter(body["tools"]), None)


@pytest.mark.parametrize(("transport", "era"), TRANSPORT_ERA)
async def test_a_query_answers_the_best_matches_in_full_best_first(
        transport: Transport, era: Era) -> None:
    token = ["alice-token"] if transport == "http" else None
    async with clients(github_server(auth=transport == "http"), transport, era,
                       tokens=token) as (c,):
        body = await query(c, "create a pull request")
        found = list(body["tools"])
        assert found[0] == "create_pull_request"
        assert len(found) == FULL_RESULTS
        entry = body["tools"]["create_pull_request"]
        assert entry["description"] == GITHUB[0][1]  # the full definition, as a read has it
        assert set(entry["inputSchema"]["properties"]) == set(GITHUB[0][2])
        assert entry["digest"].startswith("sha256:")
        more = body.get("more_tools", {})
        assert len(more) <= LINE_RESULTS and not set(more) & set(found)
        assert all(isinstance(line, str) and line for line in more.values())
        assert first(await query(c, "merge a pull request")) == "merge_pull_request"
        assert first(await query(c, "fork a repo")) == "fork_repository"


@pytest.mark.parametrize(("transport", "era"), TRANSPORT_ERA)
async def test_a_query_grants_what_it_answers(transport: Transport, era: Era) -> None:
    token = "alice-token" if transport == "http" else None
    needs_a_followed_caller(transport, era, token)
    async with clients(github_server(auth=transport == "http"), transport, era,
                       tokens=[token]) as (c,):
        arguments = {"owner": "o", "repo": "r", "title": "t", "head": "h", "base": "main"}
        assert await gated(c, "create_pull_request", arguments)
        assert "create_pull_request" in (await query(c, "open a new pull request"))["tools"]
        assert not await gated(c, "create_pull_request", arguments)  # the next call runs
        assert await gated(c, "star_repository", {"owner": "o", "repo": "r"})  # not matched


@pytest.mark.parametrize(("transport", "era"), [("memory", "legacy"), ("http", "modern")])
async def test_an_unlisted_tool_runs_on_the_request_after_the_query(
        transport: Transport, era: Era) -> None:
    """A listing within a budget: query, call (by name or through run_tool), answer."""
    token = "alice-token" if transport == "http" else None
    server = github_server(auth=transport == "http", middleware=ProgressiveDisclosure(
        listing=ListingSettings(max_tools=4)))
    async with clients(server, transport, era, tokens=[token]) as (c,):
        listed = {t.name: t for t in await c.list_tools()}
        assert "fork_repository" not in listed and "run_tool" in listed
        bridge = listed["describe_tools"]
        assert 'describe_tools(query="' in (bridge.description or "")
        assert "query" in bridge.input_schema["properties"]
        body = await query(c, "fork a repository")
        assert first(body) == "fork_repository"
        ran = await c.call_tool("run_tool", {"name": "fork_repository",
                                             "arguments": {"owner": "o", "repo": "r"}})
        assert not ran.is_error
        assert not await gated(c, "fork_repository", {"owner": "o", "repo": "r"})
        guessed = await c.call_tool("run_tool", {"name": "fork_repo", "arguments": {}},
                                    raise_on_error=False)
        assert 'describe_tools(query="...")' in guessed.structured_content["error"]["message"]  # type: ignore[index]


@pytest.mark.parametrize("transport", ["memory", "http"])
async def test_a_query_through_a_parent_that_mounted_us(transport: Transport) -> None:
    parent = FastMCP("parent")
    parent.mount(github_server(), namespace="kid")
    async with clients(parent, transport, "legacy") as (c,):
        body = await query(c, "fork a repository", tools=["kid_star_repository"],
                           bridge="kid_describe_tools")
        assert list(body["tools"])[:2] == ["star_repository", "fork_repository"]
        assert all(name.startswith("kid_") for name in body.get("more_tools", {}))
        assert not await gated(c, "kid_fork_repository", {"owner": "o", "repo": "r"})


HIDDEN = ("create_pull_request_admin", "create_pull_request_disabled",
          "create_pull_request_filtered")


class HideFiltered(Middleware):
    """A listing filter of the user's own hiding one tool."""

    async def on_list_tools(self, context: MiddlewareContext[mt.ListToolsRequest],
                            call_next: CallNext[mt.ListToolsRequest, Sequence[Tool]]
                            ) -> Sequence[Tool]:
        return [t for t in await call_next(context) if t.name != HIDDEN[2]]


@pytest.mark.parametrize("era", ERAS)
async def test_a_hidden_tool_is_never_ranked(era: Era) -> None:
    server = github_server(auth=True)
    text = "Create a pull request: create pull request, pull request created."
    server.add_tool(github_tool(HIDDEN[0], text, ["pull_request"],
                                auth=require_scopes("admin")))  # no token of TOKENS has it
    server.add_tool(github_tool(HIDDEN[1], text, ["pull_request"]))
    server.disable(names={HIDDEN[1]})
    server.add_tool(github_tool(HIDDEN[2], text, ["pull_request"]))
    server.add_middleware(HideFiltered())
    async with clients(server, "http", era, tokens=["alice-token"]) as (c,):
        result = await c.call_tool("describe_tools", {"query": "create pull request"})
        everything = await c.call_tool("describe_tools", {"query": "pull request create",
                                                          "groups": ["github"]},
                                       raise_on_error=False)
    for answer in (result, everything):
        text_seen = answer.content[0].text  # type: ignore[union-attr]
        assert not [name for name in HIDDEN if name in text_seen]
    assert first(answer_of(result)) == "create_pull_request"


async def test_bad_queries_get_a_specific_error_and_no_match_names_the_way_on() -> None:
    async with clients(github_server(), "memory", "legacy") as (c,):
        for bad, says in ((7, "one string of words"), (["create"], "one string of words"),
                          ("   ", "empty")):
            body = await query(c, bad)
            assert body["is_error"] and body["error"]["code"] == "INVALID_QUERY", bad
            assert says in body["error"]["message"]
        for bad, says in (([7], "a list of strings"), ({"a": 1}, "a list of strings"),
                          (["", " "], "empty")):
            result = await c.call_tool("describe_tools", {"queries": bad}, raise_on_error=False)
            body = answer_of(result)
            assert result.is_error and body["error"]["code"] == "INVALID_QUERY", bad
            assert says in body["error"]["message"]
        nothing = await query(c, "quantum teleportation zzz")
        assert nothing["tools"] == {} and "more_tools" not in nothing
        assert "tools/list" in nothing["message"]  # no groups here: the listing is the way
    tagged = github_server()
    tagged.add_tool(github_tool("get_weather", "Weather for a city.", ["city"], tags={"misc"}))
    async with clients(tagged, "memory", "legacy") as (c,):
        nothing = await query(c, "quantum teleportation zzz")
        assert "describe_tools(groups=[...])" in nothing["message"]
        assert nothing["available_groups"] == ["misc"]
        groups = await c.call_tool("describe_tools", {"groups": ["misc"]})
        assert "get_weather" in json.dumps(answer_of(groups))


@pytest.mark.parametrize(("transport", "era"), TRANSPORT_ERA)
async def test_a_query_answers_large_definitions_past_the_best_one_line_each(
        transport: Transport, era: Era) -> None:
    """The answer stays in the conversation for every later model request: beyond the best
    match, full definitions only while they fit ``ANSWER_CHARS``; the rest are named one line
    each and granted nothing (a gated session is taught when it calls one)."""
    long = " ".join(["Stars, lists and manages repository stargazers."] * 60)
    assert len(long) > ANSWER_CHARS // 2
    server = FastMCP("github")
    for name in ("star_repository", "unstar_repository", "list_starred_repositories"):
        server.add_tool(github_tool(name, f"{name.replace('_', ' ')}. {long}", ["owner", "repo"]))
    server.add_middleware(ProgressiveDisclosure())
    token = ["alice-token"] if transport == "http" else None
    async with clients(server, transport, era, tokens=token) as (c,):
        body = await query(c, "star a repository")
        assert list(body["tools"]) == ["star_repository"]  # the best one, in full, however large
        assert body["tools"]["star_repository"]["description"].startswith("star repository.")
        assert set(body["more_tools"]) == {"unstar_repository", "list_starred_repositories"}
        if era == "legacy":
            assert not await gated(c, "star_repository", {"owner": "o", "repo": "r"})
            assert await gated(c, "unstar_repository", {"owner": "o", "repo": "r"})


async def test_a_query_joins_the_named_tools_and_groups() -> None:
    server = github_server()
    server.add_tool(github_tool("get_weather", "Weather for a city.", ["city"], tags={"misc"}))
    async with clients(server, "memory", "legacy") as (c,):
        body = await query(c, "create a pull request", tools=["star_repository", "nope"],
                           groups=["misc"])
        found = list(body["tools"])
        assert found[:3] == ["star_repository", "nope", "create_pull_request"]
        assert len(found) == 2 + FULL_RESULTS
        assert body["tools"]["nope"]["error"] == "Tool 'nope' not found"
        assert body["groups"]["misc"]["tools"] == {"get_weather": "Weather for a city."}
        assert await gated(c, "get_weather", {"city": "Oslo"})  # a group's line grants nothing
        assert not await gated(c, "star_repository", {"owner": "o", "repo": "r"})


async def test_an_edited_description_file_ranks_by_its_new_words(
        tmp_descriptions: Path, write_description: Callable[..., Path]) -> None:
    middleware = ProgressiveDisclosure(descriptions_dir=tmp_descriptions)
    server = github_server(middleware=middleware)
    async with clients(server, "memory", "legacy") as (c,):
        await watcher_ready(middleware)
        words = "reconcile the quarterly ledger"
        assert "star_repository" not in (await query(c, words))["tools"]
        write_description("star_repository", {"summary": "Reconcile a quarterly ledger.",
                                              "description": "Reconcile the quarterly ledger."})

        async def ranked_first() -> bool:
            return first(await query(c, words)) == "star_repository"

        await until(ranked_first, 10, "star_repository ranked first by its file's words")
        body = await query(c, words)
        assert body["tools"]["star_repository"]["description"] == "Reconcile the quarterly ledger."


async def test_an_index_is_built_once_per_catalog_and_the_indexes_are_bounded(
        monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[int] = []

    class Counted(search.Index):
        @classmethod
        def build(cls, texts: Sequence[str], fold: Callable[[str], str] = singular
                  ) -> search.Index:
            built.append(len(texts))
            return super().build(texts, fold)

    monkeypatch.setattr(search, "Index", Counted)
    server = github_server(auth=True)
    server.add_tool(github_tool("wipe_everything", "Wipe every repository.", [],
                                auth=require_scopes("admin")))
    admin = {"admin-token": {"client_id": "agent", "sub": "root", "scopes": ["admin"]}}
    server.auth = StaticTokenVerifier(tokens={**TOKENS, **admin})
    async with clients(server, "http", "modern", 3,
                       tokens=["alice-token", "bob-token", "admin-token"]) as (alice, bob, root):
        for words in ("create a pull request", "fork a repo", "list issues"):
            await query(alice, words)
            await query(bob, words)  # alice's and bob's tools are the same: one index
        assert built == [len(GITHUB)]
        assert first(await query(root, "wipe every repository")) == "wipe_everything"
        assert built == [len(GITHUB), len(GITHUB) + 1]  # the admin's catalog is another
        assert "wipe_everything" not in json.dumps(await query(alice, "wipe every repository"))
        assert len(built) == 2
    built.clear()
    # the indexes kept are bounded in bytes: room for about three of these small ones
    tools = [github_tool(f"tool_{i}", "Some words.", []) for i in range(6)]
    views = [tools[i:i + 3] for i in range(4)]
    documents = search.ToolSearch(Definitions(DescriptionStore(None)), lambda tool, sig: "")
    one = max(search.Index.build([f"{t.name} {documents._document(t).text}" for t in view]).size
              for view in views)
    monkeypatch.setattr(search, "INDEX_BYTES", 3 * one + one // 2)
    kept = search.ToolSearch(Definitions(DescriptionStore(None)), lambda tool, sig: "")
    built.clear()
    for view in views:
        assert (await kept.rank(view, ["words"], 5))[0]
    assert await kept.rank(views[1], ["words"], 5)  # kept: not built again
    assert await kept.rank(views[0], ["words"], 5)  # the oldest, dropped: built again
    assert built == [3, 3, 3, 3, 3]
    assert INDEX_BYTES >= 11 * 2_000 * 1_500  # the default: eleven 2,000-tool views and more


async def test_argument_descriptions_rank_and_a_repeated_word_counts_once() -> None:
    """A tool found only by what its arguments say, and a sentence saying "weather" three
    times does not outrank the one tool the rarer "umbrella" names (LiveMCPBench's task
    texts repeat words: each counts once, as a person means it)."""
    server = github_server()
    fetch = replay_tool({"name": "fetch", "description": "Fetch a URL.", "inputSchema": {
        "type": "object", "properties": {"url": {
            "type": "string", "description": "Address of the web page to download."}}}})
    server.add_tool(fetch)
    for name, text in (("get_weather", "Weather for a city."),
                       ("weather_alerts", "Weather alerts for a region."),
                       ("buy_umbrella", "Order an umbrella.")):
        server.add_tool(github_tool(name, text, []))
    async with clients(server, "memory", "legacy") as (c,):
        assert first(await query(c, "download a web page")) == "fetch"
        assert first(await query(c, "weather weather weather: an umbrella")) == "buy_umbrella"


@pytest.mark.parametrize(("name", "words"), [
    ("create_pull_request", "create pull request"),
    ("createPullRequest", "create pull request"),
    ("get-HTTP-status", "get http status"),
    ("getHTTPStatus2", "get http status 2"),
])
def test_names_read_as_words(name: str, words: str) -> None:
    assert name_words(name) == words


@pytest.mark.skipif(not catalog_path("github-mcp-server").exists(),
                    reason="shared corpus not present")
async def test_the_whole_github_catalog_finds_its_tools_by_their_words() -> None:
    """Short queries, as a model writes them, find the tool first among 117."""
    server = FastMCP("github")
    for raw in json.loads(catalog_path("github-mcp-server").read_text(encoding="utf-8")):
        server.add_tool(replay_tool(raw))
    server.add_middleware(ProgressiveDisclosure())
    expected = {
        "create a pull request": "create_pull_request",
        "merge a PR": "merge_pull_request",
        "list issues in a repository": "list_issues",
        "search code": "search_code",
        "fork a repository": "fork_repository",
        "star a repo": "star_repository",
        "get file contents": "get_file_contents",
        "create a branch": "create_branch",
        "create a new issue": "create_issue",
        "list commits": "list_commits",
        "search repositories": "search_repositories",
        "get a pull request diff": "pull_request_read",
        "list branches": "list_branches",
        "list tags": "list_tags",
        "get my user profile": "get_me",
        "list notifications": "list_notifications",
        "list releases": "list_releases",
        "request a copilot review": "request_copilot_review",
        "delete a file": "delete_file",
        "push files": "push_files",
        "search users": "search_users",
    }
    async with clients(server, "memory", "legacy") as (c,):
        firsts = {words: first(await query(c, words)) for words in expected}
    assert firsts == expected
async def test_a_word_a_description_repeats_counts_once() -> None:
    """A tool matches by which of the query's words it says, not how often: a description
    that says "pull request" four times (and a name that says it again) does not outrank
    the tool that says it once beside the query's other word."""
    server = FastMCP("repeats")
    for name, text in (
            ("pull_request_files", "Pull request files: read a pull request's files, the "
             "pull request checks and the pull request status."),
            ("add_note", "Add a comment to a pull request."),
            ("list_comments", "List the comments of an issue."),
            ("edit_comment", "Edit a comment of an issue."),
            ("delete_comment", "Delete a comment of an issue."),
            ("list_issues", "List the issues of a repository."),
            ("get_file", "Read a file of a repository.")):
        server.add_tool(github_tool(name, text, []))
    server.add_middleware(ProgressiveDisclosure())
    async with clients(server, "memory", "legacy") as (c,):
        assert first(await query(c, "comment on a pull request")) == "add_note"
