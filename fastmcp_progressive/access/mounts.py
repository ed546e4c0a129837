"""Names as a parent server shows them, for a child mounted with ``parent.mount(child, "kid")``.

The child's middleware keeps working under a mount (its listing, its components, its
gate), but the client speaks the parent's names: ``kid_add``, ``kid_describe_tools``,
``resource://kid//tool_descriptions?tools=...``. FastMCP hands the child its own names
(``add``), while the wire request still carries the parent's; the difference is the
mount prefix. The child uses it to name the tools and the bridge in its refusals the way
the client can call them, and to accept prefixed names in a fetch.

Example:
    ```python
    prefix = call_prefix(ctx, "add")         # "kid_" when the client called "kid_add"
    names = unprefixed(["kid_add"], prefix)  # ["add"]
    ```
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastmcp.server.context import Context

from fastmcp_progressive.fastmcp_internals import wire_params


def _wire_param(ctx: Context | None, key: str) -> str | None:
    params = wire_params(ctx)
    value = params.get(key) if params is not None else None
    return value if isinstance(value, str) else None


def call_prefix(ctx: Context | None, local_name: str) -> str:
    """The prefix the client's ``tools/call`` name has over ``local_name`` ("" if none)."""
    wire = _wire_param(ctx, "name")
    if wire is None or wire == local_name or not wire.endswith(local_name):
        return ""
    return wire[: -len(local_name)]


def read_prefix(ctx: Context | None, local_uri: str) -> str:
    """The tool-name prefix of the mount a ``resources/read`` came through ("" if none).

    FastMCP's namespace turns ``resource:///x`` into ``resource://kid//x`` and tool ``t``
    into ``kid_t``.
    """
    wire = _wire_param(ctx, "uri")
    scheme = "resource://"
    if wire is None or wire == local_uri or not wire.startswith(scheme):
        return ""
    namespace = wire[len(scheme):].split("/", 1)[0]
    return f"{namespace}_" if namespace else ""


def unprefixed(names: Sequence[str], prefix: str) -> list[str]:
    """``names`` with the mount prefix removed where present."""
    if not prefix:
        return list(names)
    return [n[len(prefix):] if n.startswith(prefix) and len(n) > len(prefix) else n
            for n in names]


def mounted_uri(uri: str, prefix: str) -> str:
    """``uri`` (``resource:///...``) as the parent of a ``prefix`` mount addresses it."""
    if not prefix or not uri.startswith("resource:///"):
        return uri
    return f"resource://{prefix[:-1]}//" + uri[len("resource:///"):]


def refusal_for_mount(body: dict[str, Any], prefix: str) -> dict[str, Any]:
    """A refusal body whose resource URI routes through the parent of a ``prefix`` mount."""
    error = body.get("error")
    if prefix and isinstance(error, dict) and isinstance(error.get("resource_uri"), str):
        error["resource_uri"] = mounted_uri(error["resource_uri"], prefix)
    return body
