"""The middleware's inner parts, reached where their owners keep them (``assembly.py``).

The middleware holds a few parts, each owning its own (the gate its grants, modes and
definitions; the listing its lister, preload, watcher and net-cost check; the describer our
components and groups). Only tests read the inner ones, so the paths live here, not as
accessors in the package (#35): ``parts(middleware).hot_reload``.
"""

from __future__ import annotations

from fastmcp_progressive import ProgressiveDisclosure
from fastmcp_progressive.access.grants import GrantStore
from fastmcp_progressive.access.modes import ModePolicy
from fastmcp_progressive.disclosure.components import DisclosureComponents
from fastmcp_progressive.disclosure.cost import NetCost
from fastmcp_progressive.disclosure.groups import Groups
from fastmcp_progressive.disclosure.hot_reload import HotReload
from fastmcp_progressive.disclosure.listing import Lister, Preload
from fastmcp_progressive.files.store import Definitions, DescriptionStore


class parts:
    """``middleware``'s inner parts by their old names, each its owner's very object."""

    def __init__(self, middleware: ProgressiveDisclosure) -> None:
        self._m = middleware

    @property
    def definitions(self) -> Definitions:
        return self._m._gate.definitions

    @property
    def store(self) -> DescriptionStore:
        return self._m._gate.definitions.store

    @property
    def grants(self) -> GrantStore:
        return self._m._gate.grants

    @property
    def modes(self) -> ModePolicy:
        return self._m._gate.modes

    @property
    def anonymous(self) -> str:
        return self._m._gate.anonymous

    @property
    def exempt_tools(self) -> frozenset[str]:
        return self._m._gate.exempt_tools

    @property
    def lister(self) -> Lister:
        return self._m._tools_list.lister

    @property
    def preload(self) -> Preload:
        return self._m._tools_list.preload

    @property
    def hot_reload(self) -> HotReload:
        return self._m._tools_list.hot_reload

    @property
    def net_cost(self) -> NetCost:
        return self._m._tools_list.net_cost

    @property
    def groups(self) -> Groups:
        return self._m.describer.groups

    @property
    def components(self) -> DisclosureComponents:
        return self._m.describer.components

    @property
    def max_tools_per_read(self) -> int:
        return self._m.describer.max_tools_per_read

    @property
    def instructions(self) -> bool:
        return self._m.announcer.instructions
