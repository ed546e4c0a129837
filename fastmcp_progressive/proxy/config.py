"""The ``mcpServers`` file of ``proxy --config``: read, checked, and refused with a reason.

Hosts write the same servers in slightly different files: Claude Desktop, Cursor and
FastMCP's ``MCPConfig`` under ``mcpServers`` (or at the root), VS Code under ``servers``
with a ``type`` per server. ``load_config`` reads each into FastMCP's ``MCPConfig`` and
refuses, naming the file, the server and the fix, what would otherwise go wrong later and
quietly: a server name that cannot prefix tool names (``<server>_<tool>`` must match what
OpenAI and Anthropic accept, and name a description file), two servers whose tools could
share a name, an ``env`` value that is not a string (``null`` would reach the upstream as
the text ``None``), a VS Code variable the proxy does not expand. Every check is linear in
the file's size: a file of 20,000 servers loads in about half a second.

Example:
    ```python
    config = load_config("mcp.json")   # ConfigError("mcp.json: server 'fs/v2' ...")
    ```
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from fastmcp.mcp_config import MCPConfig, StdioMCPServer
from pydantic import ValidationError

__all__ = ["OUR_KEYS", "ConfigError", "load_config", "our_keys", "server_name_problem"]

OUR_KEYS = ("include_tools", "exclude_tools", "disabled")
"""Per-server keys we read beside FastMCP's own (kept by ``MCPConfig`` as extra fields)."""

TOOL_NAME_RULE = "^[a-zA-Z0-9_-]{1,64}$"
"""What OpenAI and Anthropic accept as a tool name."""
MAX_SERVER_NAME = 62  # "<server>_<tool>" within 64 characters leaves a tool at least one
_SERVER_NAME = re.compile(rf"[A-Za-z0-9_-]{{1,{MAX_SERVER_NAME}}}")
_VSCODE_TYPES = ("http", "sse", "streamable-http")  # VS Code's ``type`` of a URL server


class ConfigError(ValueError):
    """The ``mcpServers`` file cannot be used; the message says where and why."""


def load_config(source: MCPConfig | Mapping[str, Any] | str | os.PathLike[str]) -> MCPConfig:
    """FastMCP's ``MCPConfig`` from a file path, a dict or an ``MCPConfig``, checked.

    Raises ``ConfigError`` naming the file and the server for anything unusable: no file,
    bad JSON, no servers, an entry with neither ``command`` nor ``url``, a bad key of ours,
    and, for the servers served (not ``disabled``): a name that cannot prefix tool names,
    two names whose tools could collide, an ``env`` value that is not a string.
    """
    where = "the configuration"
    if isinstance(source, MCPConfig):
        config = source
    else:
        if isinstance(source, Mapping):
            raw: Any = dict(source)
        else:
            where = os.fspath(source)
            raw = _read_json(where)
        if not isinstance(raw, dict):
            raise ConfigError(f"{where}: expected a JSON object with \"mcpServers\"")
        raw = _from_vscode(where, raw)
        servers = raw.get("mcpServers", raw)
        if isinstance(servers, dict):
            for name, entry in servers.items():
                if not isinstance(entry, dict) or not ("command" in entry or "url" in entry):
                    raise ConfigError(f"{where}: server {name!r} needs a \"command\" "
                                      "(stdio) or a \"url\" (HTTP)")
        try:
            config = MCPConfig.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            path = ".".join(str(p) for p in first["loc"][:3])
            raise ConfigError(f"{where}: {path}: {first['msg']}") from None
    if not config.mcpServers:
        raise ConfigError(f"{where}: no servers under \"mcpServers\"")
    served: list[str] = []
    for name, entry in config.mcpServers.items():
        if our_keys(where, name, entry)[2]:
            continue  # not served: its name and values reach nothing
        problem = server_name_problem(name)
        if problem is not None:
            raise ConfigError(f"{where}: {problem}")
        _env_is_text(where, name, entry)
        served.append(name)
    _no_shadowing(where, served)
    return config


def _read_json(where: str) -> Any:
    try:
        return json.loads(Path(where).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{where}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{where}: cannot read it ({exc})") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{where}: not valid JSON ({exc})") from None


def server_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a served server, or None. It prefixes its tools' names
    (``<server>_<tool>``), which model APIs refuse outside ``TOOL_NAME_RULE``, and names
    their description files (``<server>_<tool>.json``): no spaces, slashes or dots."""
    if _SERVER_NAME.fullmatch(name):
        return None
    fixed = re.sub(r"[^A-Za-z0-9_-]+", "_", name).strip("_")[:MAX_SERVER_NAME] or "server"
    return (f"server name {name!r} cannot be a namespace: its tools are named "
            f"<server>_<tool>, and OpenAI and Anthropic refuse tool names outside "
            f"{TOOL_NAME_RULE}; use only letters, digits, '_' and '-', at most "
            f"{MAX_SERVER_NAME} characters (e.g. {fixed!r})")


def _env_is_text(where: str, name: str, entry: Any) -> None:
    """An environment holds text: ``null`` or ``true`` would reach the upstream as the
    Python spellings ``None`` and ``True``, a number as Python prints it."""
    if not isinstance(entry, StdioMCPServer):
        return
    for key, value in entry.env.items():
        if not isinstance(value, str):
            raise ConfigError(
                f"{where}: server {name!r}: env {key!r} is {json.dumps(value)}, not a "
                f"string; environment variables hold text: write it in quotes (e.g. "
                f"\"{key}\": \"{_as_text(value)}\"), or leave {key} out to not set it")


def _as_text(value: Any) -> str:
    return "" if value is None else json.dumps(value).strip('"')


def _no_shadowing(where: str, names: Sequence[str]) -> None:
    """Refuse two served servers whose tool names can collide: tools are listed as
    ``<server>_<tool>``, so with servers ``a`` and ``a_b``, ``a``'s ``b_echo`` and
    ``a_b``'s ``echo`` would both be ``a_b_echo`` (one shadowing the other, calls and
    groups going to the wrong server). Each name's prefixes ending before a ``_`` are
    looked up, not every pair of names compared."""
    served = set(names)
    for longer in names:
        for at, char in enumerate(longer):
            if char == "_" and longer[:at] in served:
                shorter, rest = longer[:at], longer[at + 1:]
                raise ConfigError(
                    f"{where}: servers {shorter!r} and {longer!r} cannot both be served: "
                    f"tools are named <server>_<tool>, so a tool '{rest}_<name>' of "
                    f"{shorter!r} and a tool '<name>' of {longer!r} would both be "
                    f"'{longer}_<name>'; rename one of the servers")


def _from_vscode(where: str, raw: dict[str, Any]) -> dict[str, Any]:
    """VS Code's ``mcp.json`` (``{"servers": {...}, "inputs": [...]}``, ``type`` per server)
    as ``mcpServers``; any other file as it is. A ``servers`` entry that is itself a server
    (with a ``command`` or ``url``) is a server named ``servers`` at the root."""
    servers = raw.get("servers")
    if ("mcpServers" in raw or not isinstance(servers, dict)
            or "command" in servers or "url" in servers):
        return raw
    converted: dict[str, Any] = {}
    for name, entry in servers.items():
        if isinstance(entry, dict):
            entry = dict(entry)
            if "url" in entry and "transport" not in entry and entry.get("type") in _VSCODE_TYPES:
                entry["transport"] = entry.pop("type")
            _no_vscode_variables(where, name, entry)
        converted[name] = entry
    return {"mcpServers": converted}


def _no_vscode_variables(where: str, name: str, entry: dict[str, Any]) -> None:
    """VS Code expands ``${input:...}``, ``${workspaceFolder}`` and ``${env:...}`` itself;
    passed on as they are, a literal ``${input:token}`` would be sent as a token."""
    for key, value in _strings(entry):
        found = re.search(r"\$\{[^}]*\}", value)
        if found:
            raise ConfigError(
                f"{where}: server {name!r}: {key} uses VS Code's variable {found.group()}, "
                "which the proxy does not expand; write the value itself")


def _strings(value: Any, path: str = "") -> list[tuple[str, str]]:
    """Every string in ``value`` with where it is (``env.TOKEN``, ``args[2]``)."""
    if isinstance(value, str):
        return [(path, value)]
    if isinstance(value, dict):
        return [found for k, v in value.items()
                for found in _strings(v, f"{path}.{k}" if path else str(k))]
    if isinstance(value, list):
        return [found for i, v in enumerate(value) for found in _strings(v, f"{path}[{i}]")]
    return []


def our_keys(where: str, name: str, entry: Any) -> tuple[list[str], list[str], bool]:
    """An entry's ``include_tools``, ``exclude_tools`` and ``disabled``, checked."""
    extra = entry.model_extra or {}
    lists: list[list[str]] = []
    for key in ("include_tools", "exclude_tools"):
        value = extra.get(key, [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise ConfigError(f"{where}: server {name!r}: {key} must be a list of tool names "
                              "or patterns")
        lists.append(value)
    disabled = extra.get("disabled", False)
    if not isinstance(disabled, bool):
        raise ConfigError(f"{where}: server {name!r}: disabled must be true or false")
    return lists[0], lists[1], disabled
