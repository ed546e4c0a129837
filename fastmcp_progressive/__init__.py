"""Progressive disclosure of tool descriptions for FastMCP servers, in one line.

Example:
    ```python
    from fastmcp import FastMCP
    from fastmcp_progressive import ProgressiveDisclosure

    mcp = FastMCP("billing")
    mcp.add_middleware(ProgressiveDisclosure(descriptions_dir="tool_descriptions"))
    ```

Settings are grouped (``settings.py``), e.g.
``ProgressiveDisclosure("tool_descriptions", grants=GrantSettings(ttl=600))``. What a user
types is exported here; the other wire constants (error codes, the groups draft) stay in
``fastmcp_progressive.payloads`` and ``fastmcp_progressive.disclosure.groups``.
"""

from fastmcp_progressive.hosts import HOST_PROFILES, HostProfile, Level
from fastmcp_progressive.middleware import ProgressiveDisclosure
from fastmcp_progressive.payloads import DESCRIPTIONS_URI, EXTENSION_ID, TOOL_DESCRIPTION_REQUIRED
from fastmcp_progressive.settings import (
    AddedComponents,
    CacheSettings,
    ClientInfo,
    ClientSettings,
    GrantSettings,
    GrantStoreProtocol,
    ListingSettings,
    ResolutionSettings,
)

__all__ = [
    "DESCRIPTIONS_URI",
    "EXTENSION_ID",
    "HOST_PROFILES",
    "TOOL_DESCRIPTION_REQUIRED",
    "AddedComponents",
    "CacheSettings",
    "ClientInfo",
    "ClientSettings",
    "GrantSettings",
    "GrantStoreProtocol",
    "HostProfile",
    "Level",
    "ListingSettings",
    "ProgressiveDisclosure",
    "ResolutionSettings",
]

__version__ = "0.1.0"
