"""Settings that used to be accepted silently are refused when built, naming the field.

Each case was accepted before and then meant something else: ``descriptions_dir=""`` read
the working directory, a NaN or infinite proxy timeout never timed out, a mode header with
a space never matched a request, a bridge named like the dispatch tool replaced it, resolver
hooks were kept while resolution was off, a summary length of -5 cut every summary, a
level header the server drops before reading it (``Authorization``) never matched, a host
profile for ``era="Modern"`` or ``transport="sse"`` matched no caller, and a grant TTL of a
microsecond expired every grant before the next call. (A bridge named like one of the
server's tools is refused at the first request: ``tests/disclosure/test_components.py``.)
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pytest

from fastmcp_progressive import (
    AddedComponents,
    ClientSettings,
    GrantSettings,
    HostProfile,
    ProgressiveDisclosure,
    ResolutionSettings,
)
from fastmcp_progressive.proxy.front import progressive_proxy
from fastmcp_progressive.proxy.upstream import Upstream
from tests.cli_runner import run_cli


def _refused(field: str, build: Any) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(field)} must be"):
        build()


@pytest.mark.parametrize("folder", ["", "   ", "a\0b"])
def test_descriptions_dir_must_name_a_folder(folder: str) -> None:
    _refused("descriptions_dir", lambda: ProgressiveDisclosure(folder))


def test_descriptions_dir_may_not_be_a_file(tmp_path: Path) -> None:
    file = tmp_path / "descriptions.json"
    file.write_text("{}")
    _refused("descriptions_dir", lambda: ProgressiveDisclosure(file))
    ProgressiveDisclosure(tmp_path / "not-yet").close()  # a folder that appears later: fine


@pytest.mark.parametrize("value", [math.nan, math.inf, -1.0, 0, True, "30"])
@pytest.mark.parametrize("field", ["startup_timeout", "request_timeout"])
def test_proxy_timeouts_are_finite_positive_seconds(field: str, value: Any) -> None:
    _refused(field, lambda: Upstream(["server"], **{field: value}))
    _refused(field, lambda: progressive_proxy(["server"], **{field: value}))


def test_proxy_request_timeout_none_still_means_no_limit() -> None:
    assert Upstream(["server"], request_timeout=None).request_timeout is None


def test_proxy_env_cwd_and_name(tmp_path: Path) -> None:
    _refused("env", lambda: Upstream(["server"], env={"PATH": 1}))  # type: ignore[dict-item]
    _refused("cwd", lambda: Upstream(["server"], cwd=tmp_path / "missing"))
    _refused("name", lambda: progressive_proxy(["server"], name=""))


@pytest.mark.parametrize("header", ["x progressive", "x-mode:", "x-modé", "", " x"])
def test_level_header_must_be_an_http_field_name(header: str) -> None:
    _refused("clients.level_header", lambda: ClientSettings(level_header=header))
    assert ClientSettings(level_header="X-Progressive-Disclosure").level_header


@pytest.mark.parametrize("header", ["Authorization", "cookie", "Proxy-Authorization"])
def test_level_header_may_not_be_one_the_server_never_reads(header: str) -> None:
    _refused("clients.level_header", lambda: ClientSettings(level_header=header))


@pytest.mark.parametrize(("field", "value"), [("era", "Modern"), ("era", "2026-07-28"),
                                              ("transport", "sse"), ("level", "progressive")])
def test_a_host_profile_that_no_caller_could_match_is_refused(field: str, value: str) -> None:
    with pytest.raises(ValueError, match=rf"host profile 'acme': {field} must be one of"):
        HostProfile(**{"name": "acme", "level": None, field: value})


@pytest.mark.parametrize("max_tools", [0, 2, 10**6, True, 4.5])
def test_a_host_profiles_tool_cap_is_a_cap_a_listing_can_hold(max_tools: Any) -> None:
    with pytest.raises(ValueError, match=r"host profile 'acme': max_tools must be"):
        HostProfile("acme", None, max_tools=max_tools)


@pytest.mark.parametrize("ttl", [1e-6, 0.5, 4.9])
def test_a_grant_ttl_shorter_than_a_models_turn_is_refused(ttl: float) -> None:
    with pytest.raises(ValueError, match=r"^grants\.ttl must be a finite number of seconds "
                                         r"at least 5"):
        GrantSettings(ttl=ttl)
    assert GrantSettings(ttl=5).ttl == 5


@pytest.mark.parametrize("name", [" describe_tools", "describe_tools ", "a\nb", "x" * 129])
@pytest.mark.parametrize("field", ["bridge_tool", "dispatch_tool"])
def test_our_tool_names_are_names_a_client_can_send(field: str, name: str) -> None:
    _refused(f"added.{field}", lambda: AddedComponents(**{field: name}))


def test_bridge_and_dispatch_tools_need_two_names() -> None:
    _refused("added.dispatch_tool",
             lambda: AddedComponents(bridge_tool="tools", dispatch_tool="tools"))
    AddedComponents(bridge_tool=None, dispatch_tool=None)


def test_resolver_hooks_need_tool_names_and_resolution_on() -> None:
    def hook(arguments: dict[str, Any]) -> None:
        return None

    _refused("resolution.resolvers", lambda: ResolutionSettings(resolvers={"": hook}))
    _refused("resolution.resolvers", lambda: ResolutionSettings(resolvers={1: hook}))  # type: ignore[dict-item]
    _refused("resolution.resolvers",
             lambda: ResolutionSettings(enabled=False, resolvers={"run_sql": hook}))
    ResolutionSettings(enabled=False, resolvers={})


@pytest.mark.parametrize(("args", "option"), [
    (["proxy", "--startup-timeout", "nan", "--", "server"], "--startup-timeout"),
    (["proxy", "--request-timeout", "inf", "--", "server"], "--request-timeout"),
    (["proxy", "--request-timeout", "-1", "--", "server"], "--request-timeout"),
    (["extract", "app.py:mcp", "-o", "out", "--summary-max-chars", "-5"], "--summary-max-chars"),
    (["check", "app.py:mcp", "out", "--summary-max-chars", "0"], "--summary-max-chars"),
])
def test_cli_options_are_checked_by_the_parser(
    args: list[str], option: str, tmp_path: Path
) -> None:
    ran = run_cli(*args, cwd=tmp_path)
    assert ran.returncode == 2  # argparse's usage error, before anything runs
    assert f"argument {option}" in ran.stderr
