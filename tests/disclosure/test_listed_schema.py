"""The listed input schema at each level: every argument, plain types, ``required`` as registered.

A third of agent frameworks read the listed schema as the whole contract, and three of them
fail at tool load on a JSON type list (``../shared/notes/hosts.md``). So at every level each
listed property has one plain ``type`` or an ``anyOf`` of plain types, arrays carry
``items``, and ``required`` is exactly the registered one. Checked on schemas by hand, and
through ``fastmcp.Client`` in memory and over streamable HTTP, both eras.
"""

from __future__ import annotations

from contextlib import nullcontext
from datetime import date
from enum import Enum
from typing import Annotated, Any, Literal

import pytest
from fastmcp import FastMCP
from pydantic import BaseModel, Field

from fastmcp_progressive import Level, ListingSettings, ProgressiveDisclosure
from fastmcp_progressive.disclosure.listed_schema import JSON_TYPES, skeleton, typed
from tests.conftest import ERAS, TRANSPORTS, Era, Transport, connect, serve_http

PLAIN = {*JSON_TYPES, "null"}


def plain_member(spec: Any) -> bool:
    """``{"type": T}`` with one JSON type (an array: and its ``items``, themselves plain)."""
    if not isinstance(spec, dict) or not isinstance(spec.get("type"), str):
        return False
    if spec["type"] not in PLAIN:
        return False
    if spec["type"] == "array":
        items = spec.get("items")
        return items == {} or plain_argument(items)
    return True


def plain_argument(spec: Any) -> bool:
    """One plain type, or an ``anyOf`` of plain types (no type list, no other union)."""
    if isinstance(spec, dict) and set(spec) == {"anyOf"}:
        return len(spec["anyOf"]) >= 2 and all(plain_member(m) for m in spec["anyOf"])
    return plain_member(spec)


def no_type_lists(value: Any) -> bool:
    if isinstance(value, dict):
        if isinstance(value.get("type"), list):
            return False
        return all(no_type_lists(v) for v in value.values())
    if isinstance(value, list):
        return all(no_type_lists(v) for v in value)
    return True


# -- by hand ----------------------------------------------------------------------------------
def test_typed_lists_every_argument_with_one_plain_type() -> None:
    schema = {
        "type": "object",
        "properties": {
            "q": {"type": "string", "description": "query", "minLength": 1},
            "n": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
            "both": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
            "listed": {"type": ["integer", "null"]},
            "mode": {"$ref": "#/$defs/Mode"},
            "tags": {"type": "array", "items": {"type": "string", "maxLength": 5}},
            "grid": {"type": "array", "items": {"type": "array", "items": {"type": "number"}}},
            "bare": {"type": "array"},
            "spec": {"$ref": "#/$defs/Spec"},
            "maybe": {"anyOf": [{"$ref": "#/$defs/Spec"}, {"type": "null"}]},
            "when": {"type": "string", "format": "date"},
            "kind": {"enum": ["a", "b"]},
            "fixed": {"const": 3},
            "anything": {},
            "nothing": {"type": "null"},
        },
        "required": ["q", "both"],
        "$defs": {
            "Mode": {"type": "string", "enum": ["fast", "slow"]},
            "Spec": {"type": "object", "properties": {"x": {"type": "integer"}},
                     "required": ["x"]},
        },
        "additionalProperties": False,
    }
    assert typed(schema) == {
        "type": "object",
        "properties": {
            "q": {"type": "string"},
            "n": {"type": "integer"},
            "both": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
            "listed": {"type": "integer"},
            "mode": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "grid": {"type": "array", "items": {"type": "array", "items": {"type": "number"}}},
            "bare": {"type": "array", "items": {}},
            "spec": {"type": "object"},
            "maybe": {"type": "object"},
            "when": {"type": "string"},
            "kind": {"type": "string"},
            "fixed": {"type": "integer"},
            "anything": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "number"},
                                   {"type": "boolean"}, {"type": "array", "items": {}},
                                   {"type": "object"}]},
            "nothing": {"type": "null"},
        },
        "required": ["q", "both"],
    }
    assert all(plain_argument(p) for p in typed(schema)["properties"].values())


def test_skeleton_adds_enums_and_nested_objects_never_type_lists() -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {"anyOf": [{"$ref": "#/$defs/Spec"}, {"type": "null"}]},
            "mode": {"type": ["string", "null"], "enum": ["a", "b", None]},
        },
        "$defs": {"Spec": {"type": "object", "properties": {
            "x": {"type": ["integer", "null"]}, "inner": {"$ref": "#/$defs/Inner"}},
            "required": ["x"]},
            "Inner": {"type": "object", "properties": {"y": {"type": "boolean"}}}},
    }
    assert skeleton(schema) == {
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {
                "x": {"type": "integer"},
                "inner": {"type": "object", "properties": {"y": {"type": "boolean"}}},
            }, "required": ["x"]},
            "mode": {"type": "string", "enum": ["a", "b"]},
        },
    }


def test_no_arguments_and_odd_schemas() -> None:
    assert typed({"type": "object", "properties": {}}) == {"type": "object", "properties": {}}
    assert typed({}) == {"type": "object", "properties": {}}
    assert typed({"properties": {"a": True, "b": "junk"}, "required": "a"}) == {
        "type": "object", "properties": {"a": ANY, "b": ANY}}


ANY = typed({"properties": {"x": {}}})["properties"]["x"]


# -- through the protocol -----------------------------------------------------------------------
class Color(Enum):
    RED = "red"
    BLUE = "blue"


class Address(BaseModel):
    street: str
    zip_code: int | None = None


def shapes_server(level: Level | None) -> FastMCP:
    """Tools with every argument shape the listing must declare truthfully."""
    mcp = FastMCP("shapes")

    @mcp.tool
    def nothing() -> str:
        """Take no argument."""
        return "ok"

    @mcp.tool
    def shapes(
        name: str,
        count: int | None = None,
        ratio: float = 0.5,
        either: int | str = 0,
        color: Color = Color.RED,
        mode: Literal["fast", "slow"] = "fast",
        due: date | None = None,
        tags: list[str] | None = None,
        matrix: list[list[float]] | None = None,
        address: Address | None = None,
        home: Address = Address(street="x"),  # noqa: B008
        extra: dict[str, int] | None = None,
        anything: Any = None,
        region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})] = "eu",
    ) -> str:
        """Take one argument of every shape. The listing must declare each of them."""
        return "ok"

    listing = ListingSettings() if level is None else ListingSettings(level=level)
    mcp.add_middleware(ProgressiveDisclosure(listing=listing))
    return mcp


@pytest.mark.parametrize("level", [None, "skeleton", "minimal"])
@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_every_level_lists_plain_types_and_the_registered_required(
    transport: Transport, era: Era, level: Level | None
) -> None:
    server = shapes_server(level)
    registered = {t.name: t for t in await server.list_tools(run_middleware=False)}
    async with serve_http(server) if transport == "http" else nullcontext(server) as target:
        async with connect(target, era) as client:
            listed = {t.name: t for t in await client.list_tools()}
    for name in ("nothing", "shapes"):
        schema = listed[name].input_schema
        full = registered[name].parameters
        assert no_type_lists(schema), name
        assert schema["type"] == "object" and isinstance(schema["properties"], dict)
        if level == "minimal":
            assert set(schema["properties"]) <= {"region"}  # headers only
            continue
        assert set(schema["properties"]) == set(full.get("properties", {})), name
        assert schema.get("required", []) == full.get("required", []), name
        assert all(plain_argument(p) for p in schema["properties"].values()), schema
    props = listed["shapes"].input_schema["properties"]
    assert props["region"] == {"type": "string", "x-mcp-header": "Region"}  # as before
    if level == "minimal":
        return
    assert props["count"] == {"type": "integer"}  # nullable optional: its one type
    assert props["either"] == {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert props["tags"] == {"type": "array", "items": {"type": "string"}}
    assert props["matrix"] == {"type": "array", "items": {"type": "array",
                                                          "items": {"type": "number"}}}
    assert props["due"] == {"type": "string"}
    assert props["extra"] == {"type": "object"}
    assert listed["shapes"].input_schema["required"] == ["name"]
    if level is None:  # typed: no enums, nested objects bare
        assert props["color"] == props["mode"] == {"type": "string"}
        assert props["address"] == props["home"] == {"type": "object"}
    else:
        assert props["color"] == {"type": "string", "enum": ["red", "blue"]}
        assert props["home"]["properties"] == {"street": {"type": "string"},
                                               "zip_code": {"type": "integer"}}
        assert props["home"]["required"] == ["street"]
