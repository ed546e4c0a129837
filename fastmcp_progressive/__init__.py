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
from .hosts import HOST_PROFILES, ClientLevel, HostProfile
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
    "HOST_PROFILES",
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
