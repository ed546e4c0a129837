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
    from .compat import ClientDescription, Mode, ModeResolver
    from .description_file import DescriptionFile, Example
    from .grants import KeyValue
    from .groups import GROUPING_EXTENSION_ID, GROUPS_META_KEY, Group
    from .hosts import HOST_PROFILES, HOST_TOOL_CAPS, ClientLevel, HostCap, HostProfile
    from .middleware import ProgressiveDisclosure
    from .payloads import (
        DESCRIPTIONS_URI,
        EXTENSION_ID,
        GRANT_STORE_UNAVAILABLE,
        MISSING_TOOL_SELECTION,
        QUERY_TOO_LONG,
        TOO_MANY_TOOLS,
        TOOL_DESCRIPTION_REQUIRED,
    )
    from .resolution import ResolverHook
    from .settings import (
        AnonymousPolicy,
        CacheSettings,
        ClientSettings,
        GrantSettings,
        ListingLevel,
        ListingSettings,
        ResolutionSettings,
        StoreErrorPolicy,
        SurfaceSettings,
    )

_WHERE: dict[str, str] = {  # public name -> the module defining it (imported on first use)
    "ClientDescription": "compat",
    "Mode": "compat",
    "ModeResolver": "compat",
    "DescriptionFile": "description_file",
    "Example": "description_file",
    "KeyValue": "grants",
    "GROUPING_EXTENSION_ID": "groups",
    "GROUPS_META_KEY": "groups",
    "Group": "groups",
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
    "ResolverHook": "resolution",
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
