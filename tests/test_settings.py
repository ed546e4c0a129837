"""Every settings check in one place: the grouped settings' defaults, one ``Level`` for every
level, and bad values refused when built, naming the field (the middleware's options, the
proxy's ``Upstream``/``progressive_proxy`` arguments, host profiles, the CLI's flags).

Many of the refused values were once accepted and then meant something else:
``descriptions_dir=""`` read the working directory, a NaN or infinite proxy timeout never
timed out, a mode header with a space never matched a request, a bridge named like the
dispatch tool replaced it, resolver hooks were kept while resolution was off, a summary
length of -5 cut every summary, a level header the server drops before reading it
(``Authorization``) never matched, a host profile for ``era="Modern"`` or
``transport="sse"`` matched no caller, and a grant TTL of a microsecond expired every grant
before the next call. (A bridge named like one of the server's tools is refused at the first
request: ``tests/disclosure/test_components.py``.)
"""

from __future__ import annotations

import ast
import inspect
import math
import re
from dataclasses import fields
from pathlib import Path
from typing import Any, get_args

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from key_value.aio.stores.memory import MemoryStore
from key_value.aio.stores.redis import RedisStore

from fastmcp_progressive import (
    HOST_PROFILES,
    AddedComponents,
    CacheSettings,
    ClientSettings,
    GrantSettings,
    HostProfile,
    Level,
    ListingSettings,
    ProgressiveDisclosure,
    ResolutionSettings,
)
from fastmcp_progressive.access.grants import (
    GrantStore,
)
from fastmcp_progressive.cli.commands import _parser
from fastmcp_progressive.proxy.front import (
    progressive_proxy,
)
from fastmcp_progressive.proxy.upstream import Upstream
from fastmcp_progressive.settings import (
    GROUPS,
    PROGRESSIVE_LEVELS,
    AnonymousPolicy,
    StoreErrorPolicy,
)
from tests.cli_runner import run_cli
from tests.parts import parts

# Each settings object's defaults, written once more here so a change to one is deliberate.
DEFAULTS: dict[type, dict[str, Any]] = {
    ListingSettings: {"level": "typed", "summary_max_chars": 100, "strip_noise": True,
                      "max_tools": "auto", "tag_groups": True, "preload": True},
    GrantSettings: {"ttl": 3600.0, "max_sessions": 100_000, "store": None,
                    "shared_sessions": False, "store_timeout": 2.0, "store_operations": 8,
                    "on_store_error": "open"},
    ClientSettings: {"anonymous": "validate", "full_clients": (),
                     "level_header": "x-progressive-disclosure", "level_resolver": None,
                     "level_resolver_timeout": 1.0,
                     "host_profiles": HOST_PROFILES},
    CacheSettings: {"listing": 20_000, "definitions": 2_048},
    AddedComponents: {"bridge_tool": "describe_tools", "guidance_prompt": True,
                      "instructions": True, "max_tools_per_read": 32,
                      "dispatch_tool": "run_tool"},
    ResolutionSettings: {"enabled": True, "resolvers": None, "hook_timeout": 1.0},
}

# One bad value per settings object, and the name its error must start with.
BAD: list[tuple[type, str, Any]] = [
    (ListingSettings, "summary_max_chars", 15),
    (GrantSettings, "ttl", math.nan),
    (GrantSettings, "store_operations", 0),
    (ClientSettings, "level_header", ""),
    (CacheSettings, "definitions", 0),
    (AddedComponents, "max_tools_per_read", 1025),
    (ResolutionSettings, "enabled", "yes"),
]


@pytest.mark.parametrize("cls", list(DEFAULTS), ids=lambda c: c.__name__)
def test_defaults_are_the_documented_ones(cls: type) -> None:
    built = cls()
    assert {f.name: getattr(built, f.name) for f in fields(cls)} == DEFAULTS[cls]


def test_the_middleware_wires_each_default_where_it_is_used() -> None:
    middleware = ProgressiveDisclosure(listing=ListingSettings(preload=False))
    lister, grants, modes, ours = (parts(middleware).lister, parts(middleware).grants,
                                   parts(middleware).modes, parts(middleware).components)
    assert lister.settings.level == "typed" and lister.settings.summary_max_chars == 100
    assert lister.settings.strip_noise is True and lister.cache_size == 20_000
    assert grants.ttl == 3600.0 and grants.store_timeout == 2.0
    assert grants.on_store_error == "open" and not grants.shared_sessions
    assert modes.level_header == "x-progressive-disclosure"
    assert modes.host_profiles == HOST_PROFILES and parts(middleware).anonymous == "validate"
    assert parts(middleware).max_tools_per_read == 32 and ours.bridge is not None
    assert ours.bridge.name == "describe_tools" and ours.prompt is not None
    assert parts(middleware).instructions is not None and middleware.resolution is not None


@pytest.mark.parametrize(("cls", "name", "value"), BAD, ids=lambda v: str(v))
def test_a_bad_value_names_its_setting(cls: type, name: str, value: Any) -> None:
    group = next(g for g, c in GROUPS.items() if c is cls)
    with pytest.raises(ValueError, match=f"^{re.escape(group)}\\.{name} must be"):
        cls(**{name: value})


def test_an_option_of_a_settings_group_given_to_the_middleware_says_where_it_goes() -> None:
    """#34: ``ProgressiveDisclosure(max_tools=20)`` was a bare TypeError."""
    with pytest.raises(TypeError, match=re.escape(
            "ProgressiveDisclosure() got an unexpected keyword argument: 'max_tools' is a "
            "field of ListingSettings: pass listing=ListingSettings(max_tools=20)")):
        ProgressiveDisclosure(max_tools=20)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"'ttl' is a field of GrantSettings: pass "
                                        r"grants=GrantSettings\(ttl=60\); 'colour' is no option "
                                        r"\(the options: descriptions_dir, listing, "):
        ProgressiveDisclosure(ttl=60, colour="red")  # type: ignore[arg-type]


def test_a_settings_group_takes_its_object_only() -> None:
    with pytest.raises(TypeError, match="grants takes a GrantSettings, not dict"):
        ProgressiveDisclosure(grants={"ttl": 60})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="listing takes a ListingSettings, not str"):
        ProgressiveDisclosure(listing="skeleton")  # type: ignore[arg-type]


def test_the_constructor_takes_at_most_eight_parameters_descriptions_dir_first() -> None:
    parameters = [p for p in inspect.signature(ProgressiveDisclosure).parameters.values()
                  if p.kind is not inspect.Parameter.VAR_KEYWORD]  # only there to refuse
    assert len(parameters) <= 8
    assert parameters[0].name == "descriptions_dir"
    assert parameters[0].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    assert ProgressiveDisclosure(descriptions_dir="tool_descriptions").store.directory


@pytest.mark.parametrize(
    ("cls", "name", "literal"),
    [
        (GrantSettings, "on_store_error", StoreErrorPolicy),
        (ClientSettings, "anonymous", AnonymousPolicy),
    ],
)
def test_allowed_values_are_the_literals_own(cls: type, name: str, literal: Any) -> None:
    for value in get_args(literal):
        assert getattr(cls(**{name: value}), name) == value
    with pytest.raises(ValueError) as raised:
        cls(**{name: "none-of-these"})
    assert f"must be one of {get_args(literal)}" in str(raised.value)


def test_one_level_for_servers_hosts_and_resolvers() -> None:
    """``Level`` is every level; a server's own listing takes the progressive ones."""
    assert get_args(Level) == ("full", "typed", "minimal", "skeleton")
    assert PROGRESSIVE_LEVELS == ("typed", "minimal", "skeleton")
    for level in PROGRESSIVE_LEVELS:
        assert ListingSettings(level=level).level == level
    with pytest.raises(ValueError, match=r"^listing\.level must be one of \('typed'"):
        ListingSettings(level="full")


@pytest.mark.parametrize(("flag", "literal"),
                         [("--anonymous", get_args(AnonymousPolicy)),
                          ("--listing", PROGRESSIVE_LEVELS)])
def test_the_proxy_command_offers_the_literals_values(flag: str, literal: Any) -> None:
    for value in literal:
        args = _parser().parse_args(["proxy", flag, value, "http://127.0.0.1:1/mcp"])
        assert getattr(args, flag[2:]) == value
    with pytest.raises(SystemExit):
        _parser().parse_args(["proxy", flag, "none-of-these", "http://127.0.0.1:1/mcp"])


def _readme_tables() -> dict[str, dict[str, str]]:
    """The Options tables of ``docs/settings.md``: ``<group>`` -> {field: default cell}."""
    text = (Path(__file__).parent.parent / "docs" / "settings.md").read_text(encoding="utf-8")
    section = text.split("\n## Options\n", 1)[1].split("\n## ", 1)[0]
    tables: dict[str, dict[str, str]] = {}
    group = ""
    for line in section.splitlines():
        heading = re.match(r"`(\w+)=\w+\(\.\.\.\)`", line)
        if heading:
            group = heading.group(1)
        row = re.match(r"\| `(\w+)` \| ([^|]+) \|", line)
        if row and group:
            tables.setdefault(group, {})[row.group(1)] = row.group(2).strip()
    return tables


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_the_settings_page_documents_every_field_with_its_default(group: str) -> None:
    documented = _readme_tables()[group]
    cls = GROUPS[group]
    assert set(documented) == {f.name for f in fields(cls)}
    for field in fields(cls):
        if isinstance(field.default, (bool, int, float, str)):
            assert ast.literal_eval(documented[field.name].strip("`")) == field.default


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
    with pytest.raises(ValueError) as refused:  # #34: a PosixPath(...) repr, "not" twice
        ProgressiveDisclosure(file)
    assert str(refused.value) == (f"descriptions_dir must be a folder of description files, "
                                  f"and {file} is a file: pass the folder that holds the files")
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


@pytest.mark.parametrize("max_tools", [0, 2, 10**6, True, 4.5, "many"])
def test_a_host_profiles_tool_cap_is_a_cap_a_listing_can_hold(max_tools: Any) -> None:
    with pytest.raises(ValueError, match=r"host profile 'acme': max_tools must be"):
        HostProfile("acme", None, max_tools=max_tools)


@pytest.mark.parametrize("flag", ["output_schema", "judged_by_arguments"])
def test_a_host_profiles_flags_are_true_or_false(flag: str) -> None:
    with pytest.raises(ValueError, match=rf"host profile 'acme': {flag} must be True or False"):
        HostProfile(**{"name": "acme", "level": None, flag: "yes"})


@pytest.mark.parametrize(("field", "value", "least"), [
    ("ttl", 1e-6, 5.0), ("ttl", 0.5, 5.0), ("ttl", 4.9, 5.0),
    ("store_timeout", 1e-6, 0.01), ("store_timeout", 0.001, 0.01),
    ("store_timeout", 0.0099, 0.01)])
def test_a_grant_time_too_short_to_work_is_refused(field: str, value: float,
                                                   least: float) -> None:
    """A ``ttl`` shorter than a model's read-then-call turn; a ``store_timeout`` no store
    meets (#34: every store operation timed out, so under ``"open"`` anyone ran any tool)."""
    with pytest.raises(ValueError, match=rf"^grants\.{field} must be a finite number of "
                                         rf"seconds at least {re.escape(f'{least:g}')}"):
        GrantSettings(**{field: value})
    assert getattr(GrantSettings(**{field: least}), field) == least


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


# -- options ------------------------------------------------------------------------------
def _with(option: str, value: Any) -> ProgressiveDisclosure:
    """The middleware with one setting, spelled ``<group>.<field>`` (or ``exempt_tools``)."""
    if "." not in option:
        return ProgressiveDisclosure(**{option: value})
    group, name = option.split(".")
    return ProgressiveDisclosure(**{group: GROUPS[group](**{name: value})})


BAD_OPTIONS: list[tuple[str, Any]] = [
    ("grants.max_sessions", 0),
    ("grants.max_sessions", True),
    ("grants.ttl", math.nan),
    ("grants.ttl", math.inf),
    ("grants.ttl", 1e12),
    ("grants.ttl", 0),
    ("grants.store_timeout", math.nan),
    ("grants.store_timeout", -1.0),
    ("exempt_tools", "add"),
    ("clients.full_clients", "old-host"),
    ("added.instructions", "no"),
    ("added.max_tools_per_read", 0),
    ("added.max_tools_per_read", 10**9),
    ("caches.definitions", 0),
    ("listing.summary_max_chars", 5),
    ("listing.level", "full"),
    ("grants.on_store_error", "maybe"),
    ("added.bridge_tool", ""),
    ("clients.level_header", 7),
    ("clients.level_resolver", "full"),
    ("grants.store", object()),
    ("listing.strip_noise", None),
    ("listing.max_tools", "many"),
    ("listing.max_tools", 2),
]


@pytest.mark.parametrize(("option", "value"), BAD_OPTIONS)
def test_bad_options_are_refused_at_construction_naming_the_option(
    option: str, value: Any
) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(option)} must be"):
        _with(option, value)


_ANY_VALUE = st.one_of(
    st.none(), st.booleans(), st.integers(-10**13, 10**13), st.floats(), st.text(max_size=8),
    st.lists(st.one_of(st.text(max_size=5), st.integers()), max_size=3),
)


@settings(max_examples=300, deadline=None)
@given(option=st.sampled_from([
    "listing.level", "listing.summary_max_chars", "listing.strip_noise", "grants.ttl",
    "grants.max_sessions", "grants.shared_sessions", "grants.store_timeout",
    "grants.on_store_error", "added.max_tools_per_read", "caches.definitions",
    "clients.full_clients", "clients.level_header", "exempt_tools", "added.bridge_tool",
    "added.guidance_prompt", "added.instructions",
]), value=_ANY_VALUE)
def test_any_option_value_is_accepted_sanely_or_refused_by_name(option: str, value: Any) -> None:
    try:
        middleware = _with(option, value)
    except ValueError as exc:
        assert str(exc).startswith(f"{option} must be"), exc
        return
    grants = parts(middleware).grants
    assert math.isfinite(grants.ttl) and 0 < grants.ttl <= 365 * 24 * 3600
    assert math.isfinite(grants.store_timeout) and grants.store_timeout > 0
    assert all(isinstance(name, str) and name for name in parts(middleware).exempt_tools)
    assert parts(middleware).max_tools_per_read >= 1


def test_bad_options_are_refused_clearly() -> None:
    with pytest.raises(ValueError, match=r"^listing\.level must be one of"):
        ProgressiveDisclosure(listing=ListingSettings(level="tiny"))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="anonymous"):
        ProgressiveDisclosure(clients=ClientSettings(anonymous="nobody"))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="summary_max_chars"):
        ProgressiveDisclosure(listing=ListingSettings(summary_max_chars=3))


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="ttl"):
        GrantStore(GrantSettings(ttl=0))
    with pytest.raises(ValueError, match="on_store_error"):
        GrantStore(GrantSettings(on_store_error="maybe"))  # type: ignore[arg-type]


class SyncStore:
    """Has ``get`` and ``put_many``, but not awaitable ones: not an AsyncKeyValue."""

    def get(self, key: str, *, collection: str | None = None) -> Any:
        return None

    def put_many(self, keys: Any, values: Any, *, collection: Any = None, ttl: Any = None) -> None:
        return None


@pytest.mark.parametrize("store", [RedisStore, MemoryStore, SyncStore(), object(), "redis://x"])
def test_a_store_that_is_not_an_async_key_value_instance_is_refused(store: Any) -> None:
    """``store=RedisStore`` (the class) was accepted, and every lookup then failed, which
    under the default "open" policy turned the gate off for every principal."""
    with pytest.raises(TypeError, match=r"^grants\.store must be a py-key-value AsyncKeyValue"):
        GrantSettings(store=store)
    with pytest.raises(ValueError, match=r"^grants\.store"):  # like every bad setting
        GrantSettings(store=store)
    if isinstance(store, type):
        with pytest.raises(TypeError, match=rf"not the class {store.__name__} itself"):
            GrantSettings(store=store)


def test_timeouts_are_checked() -> None:
    for bad in (0, -1.0, float("nan"), 61.0, True):
        with pytest.raises(ValueError, match=r"resolution\.hook_timeout"):
            ResolutionSettings(hook_timeout=bad)
        with pytest.raises(ValueError, match=r"clients\.level_resolver_timeout"):
            ClientSettings(level_resolver_timeout=bad)


def test_a_hook_must_be_callable() -> None:
    with pytest.raises(ValueError, match="resolvers"):
        ResolutionSettings(resolvers={"notes": "not a function"})  # type: ignore[dict-item]


def test_bad_profiles_are_refused_at_construction() -> None:
    with pytest.raises(ValueError, match="level"):
        HostProfile("h", "everything")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="host_profiles"):
        ClientSettings(host_profiles=["claude-code"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="host_profiles"):
        ClientSettings(host_profiles="claude-code")  # type: ignore[arg-type]


# -- progressive_proxy's own arguments -----------------------------------------------------
def test_progressive_proxy_refuses_bad_targets_and_options() -> None:
    with pytest.raises(ValueError, match="not an http"):
        progressive_proxy("server.py")
    with pytest.raises(ValueError, match="empty"):
        progressive_proxy([])
    with pytest.raises(ValueError, match="startup_timeout"):
        progressive_proxy(["x"], startup_timeout=0)
    with pytest.raises(ValueError, match="listing"):
        progressive_proxy(["x"], listing=ListingSettings(level="tiny"))
