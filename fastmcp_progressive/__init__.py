"""Progressive disclosure of tool descriptions for FastMCP servers, in one line.

Example:
    ```python
    from fastmcp import FastMCP
    from fastmcp_progressive import ProgressiveDisclosure

    mcp = FastMCP("billing")
    mcp.add_middleware(ProgressiveDisclosure(descriptions_dir="tool_descriptions"))
    ```

Settings are grouped (``settings.py``), e.g.
``ProgressiveDisclosure("tool_descriptions", grants=GrantSettings(ttl=600))``.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fastmcp_progressive.access.modes import Mode
    from fastmcp_progressive.disclosure.groups import GROUPING_EXTENSION_ID, GROUPS_META_KEY, Group
    from fastmcp_progressive.files.model import DescriptionFile, Example
    from fastmcp_progressive.hosts import (
        HOST_PROFILES,
        HOST_TOOL_CAPS,
        ClientLevel,
        HostCap,
        HostProfile,
    )
    from fastmcp_progressive.middleware import ProgressiveDisclosure
    from fastmcp_progressive.payloads import (
        DESCRIPTIONS_URI,
        EXTENSION_ID,
        GRANT_STORE_UNAVAILABLE,
        MISSING_TOOL_SELECTION,
        QUERY_TOO_LONG,
        TOO_MANY_TOOLS,
        TOOL_DESCRIPTION_REQUIRED,
    )
    from fastmcp_progressive.settings import (
        AnonymousPolicy,
        CacheSettings,
        ClientDescription,
        ClientSettings,
        GrantSettings,
        KeyValue,
        ListingLevel,
        ListingSettings,
        ModeResolver,
        ResolutionSettings,
        ResolverHook,
        StoreErrorPolicy,
        SurfaceSettings,
    )

_WHERE: dict[str, str] = {  # public name -> the module defining it (imported on first use)
    "ClientDescription": "settings",
    "Mode": "access.modes",
    "ModeResolver": "settings",
    "DescriptionFile": "files.model",
    "Example": "files.model",
    "KeyValue": "settings",
    "GROUPING_EXTENSION_ID": "disclosure.groups",
    "GROUPS_META_KEY": "disclosure.groups",
    "Group": "disclosure.groups",
    "HOST_PROFILES": "hosts",
    "HOST_TOOL_CAPS": "hosts",
    "ClientLevel": "hosts",
    "HostCap": "hosts",
    "HostProfile": "hosts",
    "ProgressiveDisclosure": "middleware",
    "DESCRIPTIONS_URI": "payloads",
    "EXTENSION_ID": "payloads",
    "GRANT_STORE_UNAVAILABLE": "payloads",
    "MISSING_TOOL_SELECTION": "payloads",
    "QUERY_TOO_LONG": "payloads",
    "TOO_MANY_TOOLS": "payloads",
    "TOOL_DESCRIPTION_REQUIRED": "payloads",
    "ResolverHook": "settings",
    "AnonymousPolicy": "settings",
    "CacheSettings": "settings",
    "ClientSettings": "settings",
    "GrantSettings": "settings",
    "ListingLevel": "settings",
    "ListingSettings": "settings",
    "ResolutionSettings": "settings",
    "StoreErrorPolicy": "settings",
    "SurfaceSettings": "settings",
}


def __getattr__(name: str) -> Any:
    """Each public name is imported when first used, so ``fastmcp-progressive proxy`` can
    start its upstreams before FastMCP is imported (``launch.py``)."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})


__all__ = [
    "DESCRIPTIONS_URI",
    "EXTENSION_ID",
    "GRANT_STORE_UNAVAILABLE",
    "GROUPING_EXTENSION_ID",
    "GROUPS_META_KEY",
    "HOST_PROFILES",
    "HOST_TOOL_CAPS",
    "MISSING_TOOL_SELECTION",
    "QUERY_TOO_LONG",
    "TOOL_DESCRIPTION_REQUIRED",
    "TOO_MANY_TOOLS",
    "AnonymousPolicy",
    "CacheSettings",
    "ClientDescription",
    "ClientLevel",
    "ClientSettings",
    "DescriptionFile",
    "Example",
    "GrantSettings",
    "Group",
    "HostCap",
    "HostProfile",
    "KeyValue",
    "ListingLevel",
    "ListingSettings",
    "Mode",
    "ModeResolver",
    "ProgressiveDisclosure",
    "ResolutionSettings",
    "ResolverHook",
    "StoreErrorPolicy",
    "SurfaceSettings",
]

__version__ = "0.1.0"
