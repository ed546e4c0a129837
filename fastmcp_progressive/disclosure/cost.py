"""What progressive disclosure saves a server's clients, and what it adds: one set of figures.

The listing shrinks, but the middleware also adds things every client is sent once: the
bridge tool (in the listing), the descriptions resource and its template, the guidance
prompt and the instructions paragraph. On a server with a few short tools the additions
can outweigh the saving (4 tools: 377 -> 270 listing tokens, plus 355 added before they
were cut). ``measure`` gives both sides; the ``tokens`` command prints them and
``NetCost`` says so once in the server's log, at its first listing, when the middleware
costs more than it saves, so a net cost is never silent.

The notice judges the server, not a caller: its whole catalog (every tool any caller may
be shown, ``fastmcp_internals.whole_catalog``) as the server's own level lists it, and
none when that catalog is budgeted (a budgeted listing always saves), whoever lists first
and whatever that caller may see. It counts UTF-8 bytes of compact JSON, in a worker
thread (``anyio.to_thread``, awaited by that first listing: no thread of our own, #35): a
server's process never loads a tokenizer for a notice (o200k_base takes about
140 MB that stay resident, and most of a second): this module has none. The ``tokens``
command counts o200k_base tokens with the counter it loads once (``cli/tokens.py:Tokens``).

Example:
    ```python
    cost = measure(plain_tools, listed_tools, components, instructions_text)
    cost.saved, cost.added_total  # in bytes
    ```
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import anyio
import mcp_types as mt
from fastmcp.tools.base import Tool

from fastmcp_progressive.disclosure.components import DisclosureComponents
from fastmcp_progressive.files.store import compact_json
from fastmcp_progressive.log import get_logger

logger = get_logger("cost")

WHERE = {"resources_list": "resources/list", "templates_list": "resources/templates/list",
         "prompts_list": "prompts/list", "instructions": "instructions"}
"""Where each addition is sent, by its key in ``Cost.added`` and ``token_report``."""


def wire(result: Any) -> str:
    """An MCP result (or one listed entry) as the compact JSON FastMCP sends."""
    return compact_json(result.model_dump(by_alias=True, exclude_none=True, mode="json"))


def listing_wire(tools: Sequence[Tool]) -> str:
    """The ``tools/list`` result for ``tools``, as sent."""
    return wire(mt.ListToolsResult(tools=[t.to_mcp_tool(name=t.name) for t in tools]))


def added_texts(components: DisclosureComponents, instructions: str | None) -> dict[str, str]:
    """What a client is sent once besides the listing, by where it is sent (the bridge is
    counted in the listing itself)."""
    template = components.template
    prompt = components.prompt
    return {
        "resources_list": wire(components.resource.to_mcp_resource(
            uri=str(components.resource.uri))),
        "templates_list": wire(template.to_mcp_template(uriTemplate=template.uri_template)),
        "prompts_list": wire(prompt.to_mcp_prompt(name=prompt.name)) if prompt else "",
        "instructions": instructions or "",
    }


@dataclass(frozen=True)
class Cost:
    """A listing without and with the middleware, and what it adds, in UTF-8 bytes."""

    unit: ClassVar[str] = "bytes"
    without: int
    with_: int
    added: Mapping[str, int]

    @property
    def saved(self) -> int:
        return self.without - self.with_

    @property
    def added_total(self) -> int:
        return sum(self.added.values())

    @property
    def net(self) -> int:
        """What each client saves overall (below 0: the middleware costs it more)."""
        return self.saved - self.added_total

    def summary(self) -> str:
        """The figures in one line, as the warning and the ``tokens`` command give them."""
        parts = ", ".join(f"{WHERE[where]} +{n:,}" for where, n in self.added.items() if n)
        return (f"tools/list {self.without:,} -> {self.with_:,} {self.unit} "
                f"(saves {self.saved:,}), plus {self.added_total:,} added once per client "
                f"({parts})")


def measure(plain: Sequence[Tool], listed: Sequence[Tool], components: DisclosureComponents,
            instructions: str | None) -> Cost:
    """The cost of ``listed`` (the progressive listing, bridge included) against ``plain``
    (the same tools as registered, without our components), in bytes."""
    added = {where: len(text.encode())
             for where, text in added_texts(components, instructions).items()}
    return Cost(len(listing_wire(plain).encode()), len(listing_wire(listed).encode()), added)


class NetCost:
    """Logs one WARNING when the middleware costs this server's clients more than it saves.

    Checked once, on the server's whole catalog at its first listing (``claim``, then
    ``check`` or ``skip``), in bytes, in a worker thread the first listing awaits (counting
    stays off the event loop). ``done`` is set when the check has run or was skipped.
    """

    def __init__(self, components: DisclosureComponents, instructions: str | None) -> None:
        self.components = components
        self.instructions = instructions
        self.done = threading.Event()
        self.cost: Cost | None = None
        self.started = False
        """Whether the check was claimed (or is ``reported_elsewhere``): a listing asks no
        more."""

    def reported_elsewhere(self) -> None:
        """No check: the caller prints these figures itself (the ``tokens`` command)."""
        self.started = True
        self.done.set()

    def claim(self) -> bool:
        """Whether the caller runs the check: the first to ask, and only when the WARNING
        would be read; ``check`` or ``skip`` follows."""
        if self.started:
            return False
        self.started = True
        if not logger.isEnabledFor(logging.WARNING):  # nobody would read the answer
            self.done.set()
            return False
        return True

    def skip(self) -> None:
        """A claimed check that has nothing to say (the catalog is budgeted, or unknown)."""
        self.done.set()

    async def check(self, plain: Sequence[Tool], listed: Sequence[Tool]) -> None:
        """Compare ``listed`` (the progressive listing, bridge included) with ``plain`` (the
        same catalog as registered, without our bridges), measured in a worker thread (off
        the loop, no thread of ours)."""
        try:
            cost = self.cost = await anyio.to_thread.run_sync(
                measure, list(plain), list(listed), self.components, self.instructions)
            if cost.net < 0:
                logger.warning(
                    "progressive disclosure costs each client of this server %s more than "
                    "it saves: %s. With %d tools, a plain listing is cheaper; "
                    "`fastmcp-progressive tokens` prints these figures in o200k tokens",
                    f"{-cost.net:,} {cost.unit}", cost.summary(), len(plain))
        except Exception:
            logger.debug("measuring what the middleware costs failed", exc_info=True)
        finally:
            self.done.set()
