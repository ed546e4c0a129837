"""Deciding, per client, between progressive disclosure and compatibility ("full") mode.

A client in ``"full"`` mode gets the listing exactly as registered and is never gated;
the descriptions resource still answers it. The decision is made per request from that
request's own client, so one client's mode never leaks to another. In order:

1. ``resolver``: a callable the server passes; it sees a ``ClientDescription`` and returns
   ``"full"``, ``"progressive"`` or ``None`` (no opinion). The operator's final say.
2. The client extension ``EXTENSION_ID`` with settings ``{"mode": "full"}`` or
   ``{"mode": "progressive"}`` (both protocol eras).
3. An HTTP header (``X-Progressive-Disclosure: full`` by default), for gateways.
4. Glob patterns on the client's ``name`` or ``name/version`` (``full_clients=[...]``).
5. Otherwise progressive.

Example:
    ```python
    ModePolicy(full_clients=["legacy-host*"], resolver=lambda c: "full" if c.principal else None)
    ```
"""

from __future__ import annotations

import fnmatch
import logging
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .caller import Caller
from .payloads import EXTENSION_ID

logger = logging.getLogger(__name__)

Mode = Literal["progressive", "full"]
MODES: tuple[Mode, ...] = ("progressive", "full")
DEFAULT_MODE_HEADER = "x-progressive-disclosure"


@dataclass(frozen=True)
class ClientDescription:
    """What a ``resolver`` may look at to choose a client's mode."""

    name: str | None
    version: str | None
    era: Literal["legacy", "modern"]
    principal: str | None
    headers: Mapping[str, str]
    extension_settings: Mapping[str, Any] | None


ModeResolver = Callable[[ClientDescription], "Mode | None"]


class ModePolicy:
    """Chooses ``"progressive"`` or ``"full"`` for one request's client (see module docs)."""

    def __init__(
        self,
        *,
        full_clients: Collection[str] = (),
        mode_header: str | None = DEFAULT_MODE_HEADER,
        resolver: ModeResolver | None = None,
    ) -> None:
        if isinstance(full_clients, str):
            raise TypeError("full_clients takes a list of glob patterns, not one string")
        self.full_clients = tuple(full_clients)
        self.mode_header = mode_header.lower() if mode_header else None
        self.resolver = resolver

    def decide(self, caller: Caller) -> Mode:
        """The mode for ``caller``; never raises (a failing resolver is logged, then ignored)."""
        settings = caller.extensions.get(EXTENSION_ID)
        settings = settings if isinstance(settings, Mapping) else None
        if self.resolver is not None:
            chosen = self._resolve(caller, settings)
            if chosen is not None:
                return chosen
        requested = settings.get("mode") if settings is not None else None
        if requested in MODES:
            return "full" if requested == "full" else "progressive"
        if self.mode_header is not None:
            value = caller.headers.get(self.mode_header, "").strip().lower()
            if value in MODES:
                return "full" if value == "full" else "progressive"
        if self.full_clients and caller.client_name and self._matches(
            caller.client_name, caller.client_version
        ):
            return "full"
        return "progressive"

    def _matches(self, name: str, version: str | None) -> bool:
        labels = (name, f"{name}/{version}") if version else (name,)
        return any(
            fnmatch.fnmatchcase(label, pattern) for pattern in self.full_clients for label in labels
        )

    def _resolve(self, caller: Caller, settings: Mapping[str, Any] | None) -> Mode | None:
        assert self.resolver is not None
        description = ClientDescription(
            name=caller.client_name,
            version=caller.client_version,
            era=caller.era,
            principal=caller.principal,
            headers=caller.headers,
            extension_settings=settings,
        )
        try:
            chosen = self.resolver(description)
        except Exception:
            logger.exception("mode resolver failed; falling back to the other rules")
            return None
        if chosen is None or chosen in MODES:
            return chosen
        logger.warning("mode resolver returned %r; expected 'full', 'progressive' or None", chosen)
        return None
