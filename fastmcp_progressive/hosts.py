"""Host profiles: the listing level a known agent host gets by default.

Hosts differ in what a progressive listing does to them (the "Hosts" section of
``docs/callers-and-hosts.md`` gives the evidence behind every row):

- hosts that already defer tools themselves (Claude Code, claude.ai / Claude Desktop,
  GitHub Copilot CLI, Codex, Cursor, VS Code) search and load tools on their own; a
  reduced listing would be deferred twice (their search sees one line, and the schema
  they load is the stripped one), so they get the ``full`` listing, never gated. Where
  such a host also has a tool cap (a row's ``max_tools``: Cursor 40, VS Code 128) and the
  server lists more tools than it takes, the full listing would lose tools silently: that
  client gets the server's progressive level within the cap instead (``toolcap.py``);
- mcp-use, whose agent allows one tool round and the answer by default, gets every tool
  listed (``max_tools=None``: no budget) and its calls judged by their arguments
  (``judged_by_arguments``), so its first call of any tool runs;
- FastMCP's own ``Client`` (``fastmcp``: also FastMCP proxies' backend clients and Agno)
  types a tool's result by the ``outputSchema`` its listing gave, and lists again before
  every call of a tool its listing lacks: it gets every tool listed with its
  ``outputSchema`` (``max_tools=None``, ``output_schema=True``), so a call of any tool is
  typed as on a plain server and costs no extra ``tools/list``;
- every other host gets the server's progressive level (``typed`` by default: every
  argument declared with a plain type, which hosts that build a validation model from the
  listed schema need) within the server's budget (``ListingSettings.max_tools``).

A profile matches on the ``clientInfo`` name (a glob, case-sensitive as hosts send it),
optionally its version (a glob), and the caller's protocol era and transport where that
decides. The table is a plain tuple: pass ``ClientSettings(host_profiles=...)`` to
extend it (``[HostProfile(...), *HOST_PROFILES]``), replace it, or turn it off (``()``).

Example:
    ```python
    from fastmcp_progressive.hosts import HOST_PROFILES, HostProfile

    mine = HostProfile("acme-agent", "skeleton", host="Acme agent")
    ProgressiveDisclosure(clients=ClientSettings(host_profiles=[mine, *HOST_PROFILES]))
    ```
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, TypeAlias, get_args

Level = Literal["full", "typed", "minimal", "skeleton"]
"""What one client's ``tools/list`` shows: ``"full"`` (as registered, never gated) or a
progressive level (``listed_schema.py``): ``"typed"`` (every argument with a plain JSON
type), ``"skeleton"`` (also enums and nested objects) or ``"minimal"`` (no properties)."""

MIN_CAP = 3
"""The smallest tool cap: the two bridges and one tool."""
MAX_CAP = 100_000

ToolBudget: TypeAlias = int | Literal["auto"] | None
"""How many tools a progressive listing holds (``ListingSettings.max_tools``, a host
profile's ``max_tools``): ``"auto"`` (the budget, ``toolcap.py``: every tool while a listing
is small, at most ``BUDGET`` entries above ``BUDGET_THRESHOLD`` tools), an int (at most that
many entries, always) or None (every tool)."""
AUTO: Literal["auto"] = "auto"
BUDGET = 20
"""Entries an automatically budgeted listing holds, the two bridges included (see
``docs/listing.md``: the figures behind it)."""
BUDGET_THRESHOLD = 50
"""Tools a listing holds before the automatic budget applies: a listing of more tools than
this gets ``BUDGET`` entries; one of this many or fewer is listed whole."""


@dataclass(frozen=True)
class HostProfile:
    """One row of the host table: which clients it matches and the level they get."""

    name: str
    """Glob on ``clientInfo.name``, e.g. ``"claude-code"`` or ``"acme-*"``."""
    level: Level | None
    """The level it gets; None: the server's own (``ListingSettings.level``)."""
    version: str | None = None
    """Glob on ``clientInfo.version`` (None: any version)."""
    era: Literal["legacy", "modern"] | None = None
    transport: Literal["http", "duplex", "stdio"] | None = None
    """``"stdio"``: a real stdio pipe only (``"duplex"`` includes in-memory clients)."""
    capability: str | None = None
    """A client capability it must advertise (e.g. ``"elicitation"``), None: any."""
    max_tools: ToolBudget = AUTO
    """How many tools the host gets: ``"auto"`` (the server's ``ListingSettings.max_tools``
    decides), an int (the most tools the host takes: a host served in ``full`` whose server
    lists more gets the server's progressive level within it instead; a lower int of
    ``ListingSettings.max_tools`` still applies) or None (every tool listed, the automatic
    budget off for this host; an int ``ListingSettings.max_tools`` still applies)."""
    output_schema: bool = False
    """List each tool's ``outputSchema`` (a progressive listing drops it): for a client that
    types or validates results by the listed schema (FastMCP's ``Client``, the MCP SDK's
    ``ClientSession.validate_tool_result``), which without it hands back untyped data."""
    judged_by_arguments: bool = False
    """Judge the client's calls by their arguments, like other callers the server cannot
    follow (``ClientSettings.anonymous``), instead of refusing a first call: for a client
    that opens a new session (over stdio: a new server process) for every tool call, so no
    grant can follow it, or one whose step budget has no room for a teaching refusal."""
    host: str = ""
    """The product's name, for people reading the table."""
    evidence: str = ""
    """Where the client name was seen (an issue thread or a file), for people checking."""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError("a host profile needs a non-empty client name pattern")
        for field, value, allowed in (
            ("level", self.level, get_args(Level)),
            ("era", self.era, ("legacy", "modern")),
            ("transport", self.transport, ("http", "duplex", "stdio")),
        ):
            if value is not None and value not in allowed:  # no caller would ever match
                raise ValueError(f"host profile {self.name!r}: {field} must be one of "
                                 f"{allowed} or None, not {value!r}")
        for flag in ("output_schema", "judged_by_arguments"):
            if not isinstance(getattr(self, flag), bool):
                raise ValueError(f"host profile {self.name!r}: {flag} must be True or False, "
                                 f"not {getattr(self, flag)!r}")
        if self.max_tools is not None and self.max_tools != AUTO and (
            not isinstance(self.max_tools, int) or isinstance(self.max_tools, bool)
            or not MIN_CAP <= self.max_tools <= MAX_CAP
        ):
            raise ValueError(f"host profile {self.name!r}: max_tools must be an integer from "
                             f"{MIN_CAP} to {MAX_CAP}, 'auto' or None, not {self.max_tools!r}")


HOST_PROFILES: tuple[HostProfile, ...] = (
    HostProfile("claude-code", "full", host="Claude Code",
                evidence="https://github.com/makenotion/lsp-mcp/pull/61"),
    HostProfile("claude-ai", "full", host="Claude Desktop, claude.ai connectors",
                evidence="https://github.com/0x4m4/hexstrike-ai/issues/11"),
    HostProfile("github-copilot-developer", "full", host="GitHub Copilot CLI",
                evidence="https://github.com/github/copilot-cli/issues/1268"),
    HostProfile(
        "fastmcp", None, transport="stdio", capability="elicitation", max_tools=None,
        output_schema=True, judged_by_arguments=True,
        host="FastMCP's CLI (fastmcp call / list) over stdio: FastMCP's default client "
             "name, with the terminal elicitation handler the CLI installs",
        evidence="https://github.com/jlowin/fastmcp src/fastmcp/client/client.py: the "
                 "default client_info is Implementation(name=\"fastmcp\"); "
                 "src/fastmcp/cli/client.py: every `fastmcp call` starts the server anew "
                 "(`fastmcp run <file>` over stdio), lists and calls once; _build_client "
                 "passes elicitation_handler=_terminal_elicitation_handler",
    ),
    HostProfile(
        "fastmcp", None, max_tools=None, output_schema=True,
        host="FastMCP's Client (in memory, HTTP, stdio), FastMCP proxies' backend "
             "clients, Pydantic AI's MCPToolset, Agno's MCPTools",
        evidence="https://github.com/jlowin/fastmcp src/fastmcp/client/client.py: the default "
                 "client_info is Implementation(name=\"fastmcp\"); "
                 "src/fastmcp/client/mixins/tools.py _parse_call_tool_result types result.data by "
                 "the listed outputSchema and lists again when the called name is not in its "
                 "listing (so does mcp's ClientSession.validate_tool_result); "
                 "shared/notes/hosts.md: Agno 3.1 connects as fastmcp",
    ),
    HostProfile(
        "mcp-use", None, max_tools=None, judged_by_arguments=True,
        host="mcp-use (MCPAgent, MCPClient)",
        evidence="https://github.com/mcp-use/mcp-use mcp_use connectors/base.py: "
                 "BaseConnector.client_info is Implementation(name=\"mcp-use\", "
                 "version=mcp_use.__version__); MCPAgent's default max_steps=5 allows one "
                 "tool round and the answer (mcp_use/agents/mcpagent.py: recursion limit "
                 "2 * max_steps, 4 graph steps per tool round), so its first call must "
                 "run and the tool must be listed",
    ),
    HostProfile(
        "codex-mcp-client", "full",
        host="Codex (CLI and IDE extension)",
        evidence="https://github.com/openai/codex codex-rs: the constant CODEX_MCP_CLIENT_NAME "
                 "(also its User-Agent codex-mcp-client/<version>); defers MCP tools at >= 100 "
                 "tools or >= 2,000 schema tokens (codex-rs/core/src/mcp_tool_exposure.rs)",
    ),
    HostProfile(
        "cursor-vscode", "full", max_tools=40,
        host="Cursor (IDE)",
        evidence="shared/notes/hosts.md: Cursor's initialize clientInfo name; it sends "
                 "tool names only and looks details up on demand (no public source link "
                 "recorded yet); a reported tool cap of about 40",
    ),
    HostProfile(
        "Visual Studio Code*", "full", max_tools=128,
        host="VS Code (stable, Insiders)",
        evidence="https://github.com/microsoft/vscode/blob/main/src/vs/workbench/contrib/"
                 "mcp/common/mcpServerRequestHandler.ts: clientInfo.name = "
                 "productService.nameLong "
                 "(\"Visual Studio Code\", \"Visual Studio Code - Insiders\"); about 30 "
                 "core tools, the rest defer_loading; a hard cap of 128 tools per request "
                 "(shared/notes/hosts.md)",
    ),
    HostProfile("Code - OSS", "full", host="VS Code OSS builds",
                evidence="https://github.com/microsoft/vscode/blob/main/product.json: "
                         "nameLong of OSS builds"),
)
"""The shipped table; first match wins. See "Hosts" in ``docs/callers-and-hosts.md``."""


PROXY_CLIENT_NAMES = frozenset({"fastmcp", "mcp"})
"""The ``clientInfo.name`` a FastMCP proxy's backend client sends: FastMCP's ``Client``'s
own from 4.2 (``fastmcp/client/client.py``), the MCP SDK's default before (4.1.2 sends
``mcp``)."""
PROXY_CAPABILITIES = frozenset({"sampling", "elicitation", "roots"})
"""What a FastMCP proxy's backend client advertises, on both protocol eras: FastMCP's
``ProxyClient.__init__`` (``fastmcp/server/providers/proxy.py``, 4.1.2 to 4.2.3) installs a
roots, a sampling and an elicitation handler unless given its own, to relay the backend's
requests to the proxy's client. FastMCP's ``Client`` advertises none of them by default, nor
Pydantic AI's ``MCPToolset`` (each only when the user passes a handler or a sampling model),
nor FastMCP's CLI (elicitation alone)."""


def check_profiles(profiles: object) -> tuple[HostProfile, ...]:
    """``profiles`` as a tuple, or a ``ValueError`` naming what is wrong with it."""
    if profiles is None:
        return ()
    if isinstance(profiles, (str, bytes, HostProfile)) or not isinstance(profiles, Iterable):
        raise ValueError("clients.host_profiles takes a sequence of HostProfile (or None/() "
                         "for none)")
    rows = tuple(profiles)
    for row in rows:
        if not isinstance(row, HostProfile):
            raise ValueError(f"clients.host_profiles holds {type(row).__name__}, expected "
                             "HostProfile")
    return rows
