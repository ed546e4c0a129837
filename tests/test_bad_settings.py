"""Settings that used to be accepted silently are refused when built, naming the field.

Each case was accepted before and then meant something else: ``descriptions_dir=""`` read
the working directory, a NaN or infinite proxy timeout never timed out, a mode header with
a space never matched a request, a bridge named like the dispatch tool replaced it, resolver
hooks were kept while resolution was off, a summary length of -5 cut every summary.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pytest

from fastmcp_progressive import (
    ClientSettings,
    ProgressiveDisclosure,
    ResolutionSettings,
    SurfaceSettings,
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
def test_mode_header_must_be_an_http_field_name(header: str) -> None:
    _refused("clients.mode_header", lambda: ClientSettings(mode_header=header))
    assert ClientSettings(mode_header="X-Progressive-Disclosure").mode_header


@pytest.mark.parametrize("name", [" describe_tools", "describe_tools ", "a\nb", "x" * 129])
@pytest.mark.parametrize("field", ["bridge_tool", "dispatch_tool"])
def test_our_tool_names_are_names_a_client_can_send(field: str, name: str) -> None:
    _refused(f"surface.{field}", lambda: SurfaceSettings(**{field: name}))


def test_bridge_and_dispatch_tools_need_two_names() -> None:
    _refused("surface.dispatch_tool",
             lambda: SurfaceSettings(bridge_tool="tools", dispatch_tool="tools"))
    SurfaceSettings(bridge_tool=None, dispatch_tool=None)


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
