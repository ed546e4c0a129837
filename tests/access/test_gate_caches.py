"""What the gate keeps between calls stays exact: per-client mode answers and the gateway
tools of a server's transforms, each recomputed when what it was computed from changes."""

from __future__ import annotations

from fastmcp import FastMCP
from fastmcp.server.transforms.search import RegexSearchTransform

from fastmcp_progressive import ClientSettings
from fastmcp_progressive.access.caller import Caller
from fastmcp_progressive.access.gate import gateways_of
from fastmcp_progressive.access.modes import MAX_CLIENTS_KEPT, ModePolicy


def test_gateway_tools_follow_the_servers_transforms() -> None:
    server: FastMCP = FastMCP("gw")
    assert gateways_of(server) == frozenset()
    server.add_transform(RegexSearchTransform())
    assert {"search_tools", "call_tool"} <= gateways_of(server)
    assert gateways_of(server) is gateways_of(server)  # kept while the transforms stay


def test_mode_answers_per_client_are_exact_and_bounded() -> None:
    policy = ModePolicy(ClientSettings(full_clients=["legacy-*"], host_profiles=()))
    legacy = Caller(kind="stream", era="modern", key="a", client_name="legacy-host")
    other = Caller(kind="stream", era="modern", key="b", client_name="new-host")
    for _ in range(2):
        assert policy.level(legacy) == "full"
        assert policy.level(other) == "typed"
    asked = Caller(kind="stream", era="modern", key="c", client_name="legacy-host",
                   headers={"x-progressive-disclosure": "skeleton"})
    assert policy.level(asked) == "skeleton"  # per request: the header still wins
    for i in range(3 * MAX_CLIENTS_KEPT):
        policy.level(Caller(kind="stream", era="modern", key=str(i), client_name=f"c{i}"))
    assert len(policy._by_client) <= MAX_CLIENTS_KEPT
    assert policy.level(legacy) == "full"
