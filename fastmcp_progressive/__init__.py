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
