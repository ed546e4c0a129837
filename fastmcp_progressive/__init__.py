"""Progressive disclosure of tool descriptions for FastMCP servers, in one line.

Example:
    ```python
    from fastmcp import FastMCP
    from fastmcp_progressive import ProgressiveDisclosure

    mcp = FastMCP("billing")
    mcp.add_middleware(ProgressiveDisclosure(descriptions_dir="tool_descriptions"))
    ```
"""

from .compat import ClientDescription, Mode
from .description_file import DescriptionFile, Example
from .hosts import HOST_PROFILES, ClientLevel, HostProfile
from .listing import ListingLevel
from .middleware import AnonymousPolicy, ProgressiveDisclosure
from .payloads import (
    DESCRIPTIONS_URI,
    EXTENSION_ID,
    MISSING_TOOL_SELECTION,
    QUERY_TOO_LONG,
    TOO_MANY_TOOLS,
    TOOL_DESCRIPTION_REQUIRED,
)

__all__ = [
    "DESCRIPTIONS_URI",
    "EXTENSION_ID",
    "HOST_PROFILES",
    "MISSING_TOOL_SELECTION",
    "QUERY_TOO_LONG",
    "TOOL_DESCRIPTION_REQUIRED",
    "TOO_MANY_TOOLS",
    "AnonymousPolicy",
    "ClientDescription",
    "ClientLevel",
    "DescriptionFile",
    "Example",
    "HostProfile",
    "ListingLevel",
    "Mode",
    "ProgressiveDisclosure",
]

__version__ = "0.1.0"
