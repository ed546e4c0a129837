"""The "What hosts send the model" section, its headline line, and the targets it judges.

Issue 28's targets, per agent framework path and corpus catalog, with the one-line default
(``ProgressiveDisclosure()``): the whole session of a first use at least 80% below the same
framework against the plain server (where the plain listing loads at all), and any tool, in
the listing or not, run with the model's exact arguments within 3 model requests, the final
answer included (its call at request 2 at the latest). A framework path named
``<framework> + <setting>`` ran with the setting the documentation tells that framework's
users to make (``SETTINGS``), its plain run too; it is judged by the same targets, and left
out of the headline and the figure (both about the one-line default).

Example:
    ```python
    lines = section(results, "benchmarks/figures")   # [] when hosts were not measured
    ```
"""

from __future__ import annotations

from ..results import HostRow, Results
from .markdown import MISSING, figure, table

SESSION_CUT = 0.80
FIRST_USE_REQUEST = 2
"""The latest model request whose call may first run the tool (the answer comes third)."""
OURS = "default"
STDIO = "stdio"
TARGETS = ("listed", "unlisted")
SETTINGS = {
    "mcp-use-budget": "`MCPAgent(..., max_steps=8)` and, on the server, "
                      "`ClientSettings(host_profiles=[HostProfile(\"mcp-use\", None, "
                      "judged_by_arguments=True), *HOST_PROFILES])` (mcp-use given the "
                      "listing budget)",
}
"""What each documented setting is (``tests/hosts/serve.py``'s ``SETTINGS`` and the driver)."""


def path(row: HostRow) -> str:
    """The framework path a row measured: its host, and the setting it made if any."""
    return f"{row.host} + {row.setting}" if row.setting else row.host


def find(results: Results, host: str, catalog: str, listing: str,
         target: str = "listed", transport: str = STDIO) -> HostRow | None:
    """The row of framework path ``host`` (``path``) for that catalog, listing and target."""
    return next((r for r in results.hosts
                 if (path(r), r.catalog, r.listing, r.target, r.transport)
                 == (host, catalog, listing, target, transport)), None)


def hosts(results: Results, settings: bool = True) -> list[str]:
    """The framework paths measured (``settings=False``: those with their defaults only)."""
    return list(dict.fromkeys(path(r) for r in results.hosts if settings or not r.setting))


def catalogs(results: Results, transport: str = STDIO) -> list[str]:
    """The catalogs measured over ``transport`` (the targets are judged over stdio)."""
    return list(dict.fromkeys(r.catalog for r in results.hosts if r.transport == transport))


def loaded(row: HostRow | None) -> bool:
    """Whether the host sent the model anything (it could load the listing)."""
    return row is not None and row.requests > 0 and row.tokens >= 0


def cut(row: HostRow | None, plain: HostRow | None, session: bool = True) -> float | None:
    """How far below plain ``row``'s whole session (or tools array) is: 0.85 = 85% fewer;
    None when either side sent nothing."""
    if not loaded(row) or not loaded(plain):
        return None
    assert row is not None and plain is not None
    ours, theirs = ((row.session_tokens, plain.session_tokens) if session
                    else (row.tokens, plain.tokens))
    return None if ours < 0 or theirs <= 0 else 1 - ours / theirs


def reached(row: HostRow | None) -> bool:
    """The tool body ran with the model's exact arguments within 3 model requests."""
    return (row is not None and row.body_ran and row.arguments_intact
            and row.steps_to_first_success is not None
            and row.steps_to_first_success <= FIRST_USE_REQUEST
            and row.requests <= FIRST_USE_REQUEST + 1)


def cuts(results: Results, target: str = "unlisted") -> list[tuple[str, list[float | None]]]:
    """Per host, the whole-session cut of ``target``'s first use per catalog measured (None:
    plain did not load, or the tool never ran)."""
    def one(host: str, catalog: str) -> float | None:
        ours = find(results, host, catalog, OURS, target)
        ran = ours is not None and ours.body_ran
        return cut(ours, find(results, host, catalog, "plain", target)) if ran else None

    return [(host, [one(host, c) for c in catalogs(results)])
            for host in hosts(results, settings=False)]


def headline(results: Results) -> list[str]:
    """The report's headline line for what hosts send (empty when not measured)."""
    parts = []
    for catalog in catalogs(results):
        shares = [s for host in hosts(results, settings=False) for target in TARGETS
                  if (s := cut(find(results, host, catalog, OURS, target),
                               find(results, host, catalog, "plain", target))) is not None]
        if shares:
            parts.append(f"{catalog} {-max(shares):+.0%} to {-min(shares):+.0%}")
    rows = [r for r in results.hosts
            if r.listing == OURS and r.transport == STDIO and not r.setting]
    if not parts or not rows:
        return []
    ok = sum(1 for r in rows if reached(r))
    return [f"- **What hosts send the model** ({len(hosts(results, settings=False))} agent "
            "framework paths, "
            f"stdio, the one-line default): the whole session of a first use "
            f"{'; '.join(parts)} against the plain server; the tool ran with the model's "
            f"exact arguments within 3 model requests in {ok} of {len(rows)} runs (listed "
            "and unlisted targets)."]


def requests_text(row: HostRow | None) -> str:
    if row is None:
        return MISSING
    if not loaded(row):
        return "cannot load"
    if row.steps_to_first_success is None or not row.body_ran:
        return f"never ({row.requests})"
    exact = "" if row.arguments_intact else ", arguments changed"
    return f"{row.steps_to_first_success} of {row.requests}{exact}"


def _session(plain: HostRow | None, ours: HostRow | None) -> str:
    if ours is None or plain is None:
        return MISSING
    if not loaded(plain):
        return f"plain cannot load / {ours.session_tokens:,}"
    share = cut(ours, plain)
    return (f"{plain.session_tokens:,} / {ours.session_tokens:,}"
            + (f" ({-share:+.0%})" if share is not None else ""))


def _tokens(row: HostRow | None) -> str:
    return MISSING if row is None or row.tokens < 0 else f"{row.tokens:,} ({row.tools_sent})"


def section(results: Results, figures: str) -> list[str]:
    """The Markdown section (empty when the run did not measure hosts)."""
    if not results.hosts:
        return []
    out = ["## What hosts send the model", "",
           "Real agent frameworks (`tests/hosts/`, each in its own virtualenv, its documented "
           "MCP path) start the server over stdio, with the model replaced by a scripted "
           "OpenAI-compatible endpoint that records each request. The model knows the tool "
           "it needs and its exact arguments: when the tool is in the `tools` array it was "
           "sent it calls it (and on a `TOOL_DESCRIPTION_REQUIRED` refusal does what the "
           "refusal says); when it is not, it calls `describe_tools({\"query\": ...})` with "
           "the tool's own words (its name split into words and the first words of its "
           "summary), then calls it by name if the host re-listed, else through "
           "`run_tool({\"name\", \"arguments\"})`; then it answers. `plain`: the catalog "
           "replayed without our middleware; `default`: `ProgressiveDisclosure()` with no "
           "settings. `listed`: a target early in the catalog's order (in the default "
           "listing of a fresh server); `unlisted`: one far from it. Tools array: o200k_base "
           "over the compact JSON of the `tools` array in the host's first model request, "
           "as sent (the host's own wrapping included), with the number of tools in it. "
           "Session: every request body the host sent the model in the run (system prompt, "
           "messages, tool results and the `tools` array each time), summed, plain / ours "
           f"(cut). Requests: the model request whose call first ran the tool, of all the "
           f"run's requests (the answer included). Targets: the session at least "
           f"{SESSION_CUT:.0%} below plain, and the tool run with the model's exact arguments "
           f"by request {FIRST_USE_REQUEST} of at most {FIRST_USE_REQUEST + 1}, judged over stdio; "
           "a table marked `over http` is the same run over streamable HTTP on 127.0.0.1 "
           "(each framework's own protocol era), for comparison.", "",
           *_settings_note(results),
           *figure(figures, "hosts_cuts", "whole session below plain per framework"),
           f"Measured {results.measured('hosts')}.", ""]
    for transport, catalog in dict.fromkeys((r.transport, r.catalog) for r in results.hosts):
        rows = []
        for host in hosts(results):
            plain = {t: find(results, host, catalog, "plain", t, transport) for t in TARGETS}
            ours = {t: find(results, host, catalog, OURS, t, transport) for t in TARGETS}
            if not any((*plain.values(), *ours.values())):
                continue
            client = next((r.client for r in (*ours.values(), *plain.values())
                           if r is not None and loaded(r)), MISSING)
            rows.append([host, client, _tokens(plain["unlisted"] or plain["listed"]),
                         _tokens(ours["unlisted"] or ours["listed"]),
                         *[_session(plain[t], ours[t]) for t in TARGETS],
                         *[requests_text(ours[t]) for t in TARGETS]])
        out += [f"### {catalog}" + ("" if transport == STDIO else f", over {transport}"), "",
                table(["framework path", "clientInfo", "tools array plain",
                       "tools array default", "session plain / default, listed",
                       "session plain / default, unlisted", "requests, listed",
                       "requests, unlisted"], rows), ""]
    failed = [f"{_label(r)} ({_why(r)})" for r in results.hosts
              if r.listing == OURS and not reached(r)]
    dear = [f"{_label(r)} ({-share:+.0%})" for r in results.hosts
            if r.listing == OURS and (share := cut(r, find(
                results, path(r), r.catalog, "plain", r.target, r.transport))) is not None
            and share < SESSION_CUT]
    if failed:
        out += ["Runs of the default that missed the first-use target: " + "; ".join(failed)
                + ".", ""]
    if dear:
        out += [f"Sessions less than {SESSION_CUT:.0%} below plain: " + "; ".join(dear) + ".",
                ""]
    return out


def _settings_note(results: Results) -> list[str]:
    """What the documented settings measured are (none: no line)."""
    made = dict.fromkeys(r.setting for r in results.hosts if r.setting)
    if not made:
        return []
    return ["A framework path named `<framework> + <setting>` ran with the setting the "
            "documentation tells its users to make (`tests/hosts/README.md`), against the "
            "plain server with the same framework setting: "
            + "; ".join(f"`{name}`: {SETTINGS.get(name, MISSING)}" for name in made) + ".",
            ""]


def _label(row: HostRow) -> str:
    return "/".join((path(row), row.catalog, row.target)
                    + (() if row.transport == STDIO else (row.transport,)))


def _why(row: HostRow) -> str:
    if not loaded(row):
        return "could not load: " + (row.error[:120] or "no request")
    if not row.body_ran:
        return "the tool never ran" + (f": {row.error[:120]}" if row.error else "")
    if not row.arguments_intact:
        return "arguments changed"
    return f"first use at request {row.steps_to_first_success} of {row.requests}"
