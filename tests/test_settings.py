"""The grouped settings: their defaults, bad values named, one ``Level`` for every level."""

from __future__ import annotations

import ast
import inspect
import math
import re
from dataclasses import fields
from pathlib import Path
from typing import Any, get_args

import pytest

from fastmcp_progressive import (
    HOST_PROFILES,
    AddedComponents,
    CacheSettings,
    ClientSettings,
    GrantSettings,
    Level,
    ListingSettings,
    ProgressiveDisclosure,
    ResolutionSettings,
)
from fastmcp_progressive.cli.commands import _parser
from fastmcp_progressive.settings import (
    GROUPS,
    PROGRESSIVE_LEVELS,
    AnonymousPolicy,
    StoreErrorPolicy,
)

# Each settings object's defaults, written once more here so a change to one is deliberate.
DEFAULTS: dict[type, dict[str, Any]] = {
    ListingSettings: {"level": "typed", "summary_max_chars": 100, "strip_noise": True,
                      "max_tools": None, "tag_groups": True, "preload": True},
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
    assert middleware.lister.level == "typed" and middleware.lister.summary_max_chars == 100
    assert middleware.lister.strip_noise is True and middleware.lister.cache_size == 20_000
    assert middleware.grants.ttl == 3600.0 and middleware.grants.store_timeout == 2.0
    assert middleware.grants.on_store_error == "open" and not middleware.grants.shared_sessions
    assert middleware.modes.level_header == "x-progressive-disclosure"
    assert middleware.modes.host_profiles == HOST_PROFILES and middleware.anonymous == "validate"
    assert middleware.max_tools_per_read == 32 and middleware.bridge is not None
    assert middleware.bridge.name == "describe_tools" and middleware.prompt is not None
    assert middleware.instructions is True and middleware.resolution is not None


@pytest.mark.parametrize(("cls", "name", "value"), BAD, ids=lambda v: str(v))
def test_a_bad_value_names_its_setting(cls: type, name: str, value: Any) -> None:
    group = next(g for g, c in GROUPS.items() if c is cls)
    with pytest.raises(ValueError, match=f"^{re.escape(group)}\\.{name} must be"):
        cls(**{name: value})


def test_a_settings_group_takes_its_object_only() -> None:
    with pytest.raises(TypeError, match="grants takes a GrantSettings, not dict"):
        ProgressiveDisclosure(grants={"ttl": 60})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="listing takes a ListingSettings, not str"):
        ProgressiveDisclosure(listing="skeleton")  # type: ignore[arg-type]


def test_the_constructor_takes_at_most_eight_parameters_descriptions_dir_first() -> None:
    parameters = list(inspect.signature(ProgressiveDisclosure).parameters.values())
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
