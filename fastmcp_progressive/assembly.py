"""The parts one ``ProgressiveDisclosure`` is made of, each owning its own parts.

The middleware holds five parts and its order check (``tests/architecture/
test_collaborators.py``: at most eight), as FastMCP's middleware hold a few grouped options:
the gate owns the grants and the listing mode per client (built from their settings), and
the definitions (which build the description store); the describer owns our components, the
groups, the tool cap and the query search; the listing owns the lister (and its preload),
the description watcher, the net-cost check and the handshake's word on the listing. Built
here once from the six settings groups, so the middleware's module holds only its hooks
(``middleware.py``).

Example:
    ```python
    parts = assemble(middleware, "tool_descriptions", listing=ListingSettings(), ...)
    verdict = await parts.gate.decide(facts)
    ```
"""

from __future__ import annotations

import os
from collections.abc import Collection
from dataclasses import dataclass

from fastmcp.server.middleware import Middleware

from fastmcp_progressive import payloads
from fastmcp_progressive.access.catalog import Catalog
from fastmcp_progressive.access.gate import Gate
from fastmcp_progressive.disclosure.describer import Describer
from fastmcp_progressive.disclosure.listing import Lister
from fastmcp_progressive.disclosure.toolcap import ToolCap
from fastmcp_progressive.disclosure.tools_list import ToolsList
from fastmcp_progressive.files.folder import anchored
from fastmcp_progressive.files.store import Definitions
from fastmcp_progressive.options import folder, names
from fastmcp_progressive.resolution.server import ToolResolution
from fastmcp_progressive.settings import (
    AddedComponents,
    CacheSettings,
    ClientSettings,
    GrantSettings,
    ListingSettings,
    ResolutionSettings,
    given,
)


@dataclass(frozen=True)
class Parts:
    """What the middleware holds: the gate, the catalog, the describer (the describe path
    and our components), the listing (and the handshake's word on it) and
    ``tools/resolve`` (None when off)."""

    gate: Gate
    catalog: Catalog
    describer: Describer
    tools_list: ToolsList
    resolution: ToolResolution | None


def assemble(owner: Middleware, descriptions_dir: str | os.PathLike[str] | None, *,
             listing: ListingSettings | None, grants: GrantSettings | None,
             clients: ClientSettings | None, caches: CacheSettings | None,
             added: AddedComponents | None, resolution: ResolutionSettings | None,
             exempt_tools: Collection[str]) -> Parts:
    """The parts of ``owner`` from its settings (None: the group's defaults; each group
    checked its values when built, and ``given`` refuses anything else, naming the fix)."""
    listing = given("listing", listing, ListingSettings)
    grants = given("grants", grants, GrantSettings)
    clients = given("clients", clients, ClientSettings)
    caches = given("caches", caches, CacheSettings)
    added = given("added", added, AddedComponents)
    resolution = given("resolution", resolution, ResolutionSettings)
    folder("descriptions_dir", descriptions_dir)
    directory, origin = (anchored(descriptions_dir) if descriptions_dir is not None
                         else (None, None))
    folder("descriptions_dir", directory)  # where it points: not a file
    definitions = Definitions(directory, origin=origin, cache_size=caches.definitions)
    store = definitions.store
    lister = Lister(store, listing, cache_size=caches.listing)
    gate = Gate(definitions=definitions, grants=grants, clients=clients, level=listing.level,
                exempt_tools=names("exempt_tools", exempt_tools))
    catalog = Catalog(owner=owner)
    cap = ToolCap(gate.grants, listing.max_tools, clients.host_profiles or ())
    resolver = (ToolResolution(store, catalog, resolution, checker=gate.checker)
                if resolution.enabled else None)
    describer = Describer(
        gate=gate, catalog=catalog, definitions=definitions, lister=lister,
        tag_groups=listing.tag_groups, cap=cap, max_tools_per_read=added.max_tools_per_read,
        bridge_name=added.bridge_tool, dispatch_name=added.dispatch_tool if cap.possible else None,
        guidance_prompt=added.guidance_prompt)
    tools_list = ToolsList(
        lister=lister, gate=gate, catalog=catalog, groups=describer.groups, cap=cap,
        components=describer.components, marks=resolver.mark if resolver else None,
        instructions=payloads.instructions(added.bridge_tool) if added.instructions else None)
    return Parts(gate, catalog, describer, tools_list, resolver)
