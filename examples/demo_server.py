"""A small order-desk MCP server with progressive disclosure switched on.

Nine tools with full docstrings, typed parameters and (for some) structured output, the
kind of catalog whose listing costs thousands of tokens before any work starts. Run it:

    fastmcp run examples/demo_server.py                      # stdio
    fastmcp run examples/demo_server.py --transport http     # streamable HTTP on :8000

``examples/tool_descriptions/`` holds hand-written descriptions for some of the tools;
the others are described from their registered definitions. ``manage_notes`` is a
multi-action tool: its static annotations declare the worst case (delete), and its file's
``resolution`` rules tell a client asking ``tools/resolve`` that a read is read-only.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Literal

from fastmcp import FastMCP
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field

from fastmcp_progressive import ProgressiveDisclosure

mcp = FastMCP(
    "order-desk",
    instructions="Order desk for Acme Outdoor: customers, orders, invoices and shipping.",
)
# the README's one line: "tool_descriptions" is found beside this file, from any directory
mcp.add_middleware(ProgressiveDisclosure(descriptions_dir="tool_descriptions"))


class Customer(BaseModel):
    id: str
    name: str
    email: str
    tier: Literal["standard", "gold", "platinum"]


class Order(BaseModel):
    id: str
    customer_id: str
    status: Literal["pending", "paid", "shipped", "delivered", "refunded"]
    total_cents: int
    items: list[str]


class Invoice(BaseModel):
    id: str
    order_id: str
    amount_cents: int
    due: date
    sent: bool = False


_CUSTOMERS = {
    "c-100": Customer(id="c-100", name="Ada Park", email="ada@example.com", tier="gold"),
    "c-101": Customer(id="c-101", name="Ben Ortiz", email="ben@example.com", tier="standard"),
}
_ORDERS = {
    "o-500": Order(
        id="o-500",
        customer_id="c-100",
        status="paid",
        total_cents=12900,
        items=["tent-2p", "stove"],
    ),
    "o-501": Order(
        id="o-501", customer_id="c-101", status="shipped", total_cents=4500, items=["headlamp"]
    ),
}


@mcp.tool
def search_customers(
    query: Annotated[str, Field(description="Name or e-mail fragment, case-insensitive.")],
    tier: Annotated[
        Literal["standard", "gold", "platinum"] | None,
        Field(description="Only customers of this loyalty tier."),
    ] = None,
    limit: Annotated[int, Field(ge=1, le=100, description="Most results to return.")] = 20,
) -> list[Customer]:
    """Find customers by name or e-mail address.

    Matches are case-insensitive substring matches on the customer's name and e-mail. Use
    the returned ``id`` with the other tools. Results are ordered by name; at most
    ``limit`` are returned, so narrow the query rather than raising the limit.
    """
    q = query.lower()
    found = [c for c in _CUSTOMERS.values() if q in c.name.lower() or q in c.email.lower()]
    return [c for c in found if tier is None or c.tier == tier][:limit]


@mcp.tool
def get_customer(
    customer_id: Annotated[str, Field(description="Customer id, e.g. 'c-100'.")],
) -> Customer:
    """Fetch one customer's profile by id.

    Returns name, e-mail and loyalty tier. Raises an error when the id is unknown; look
    the id up with search_customers first if you only know a name.
    """
    if customer_id not in _CUSTOMERS:
        raise ValueError(f"no customer {customer_id!r}")
    return _CUSTOMERS[customer_id]


@mcp.tool
def list_orders(
    customer_id: Annotated[str, Field(description="Whose orders to list.")],
    status: Annotated[
        Literal["pending", "paid", "shipped", "delivered", "refunded"] | None,
        Field(description="Only orders in this status."),
    ] = None,
) -> list[Order]:
    """List a customer's orders, newest first.

    Each order carries its status, total in cents and item SKUs. Filter by status to find,
    for example, orders that are paid but not yet shipped.
    """
    orders = [o for o in _ORDERS.values() if o.customer_id == customer_id]
    return [o for o in orders if status is None or o.status == status]


@mcp.tool
def get_order(order_id: Annotated[str, Field(description="Order id, e.g. 'o-500'.")]) -> Order:
    """Fetch one order with its items, status and total.

    Use this before refunding or invoicing to confirm the amount and status.
    """
    if order_id not in _ORDERS:
        raise ValueError(f"no order {order_id!r}")
    return _ORDERS[order_id]


@mcp.tool
def refund_order(
    order_id: Annotated[str, Field(description="The order to refund.")],
    amount_cents: Annotated[
        int | None, Field(ge=1, description="Partial refund in cents; omit for a full refund.")
    ] = None,
    reason: Annotated[str, Field(min_length=3, description="Shown to the customer.")] = "",
) -> str:
    """Refund an order in full or in part.

    Refunds go back to the original payment method and cannot be undone. Only paid,
    shipped or delivered orders can be refunded; the amount may not exceed the order total.
    """
    order = get_order(order_id)
    amount = amount_cents or order.total_cents
    if amount > order.total_cents:
        raise ValueError("refund exceeds the order total")
    return f"refunded {amount} cents on {order_id}: {reason or 'no reason given'}"


@mcp.tool
def create_invoice(
    order_id: Annotated[str, Field(description="The order to invoice.")],
    due: Annotated[date, Field(description="Due date, ISO 8601 (YYYY-MM-DD).")],
    note: Annotated[
        str | None, Field(max_length=500, description="Printed on the invoice.")
    ] = None,
) -> Invoice:
    """Create a draft invoice for an order.

    The invoice amount is the order total. The invoice is created as a draft; deliver it
    with send_invoice.
    """
    order = get_order(order_id)
    return Invoice(id=f"inv-{order_id}", order_id=order_id, amount_cents=order.total_cents, due=due)


@mcp.tool
def send_invoice(
    invoice_id: Annotated[str, Field(description="Invoice id returned by create_invoice.")],
    cc: Annotated[list[str], Field(description="Extra e-mail recipients.")] = [],  # noqa: B006
) -> str:
    """E-mail a draft invoice to the customer.

    Marks the invoice as sent. Sending twice re-sends the same invoice.
    """
    return f"sent {invoice_id}" + (f" (cc {', '.join(cc)})" if cc else "")


@mcp.tool
def get_shipping_quote(
    destination_zip: Annotated[str, Field(pattern=r"^\d{5}$", description="US ZIP code.")],
    weight_grams: Annotated[int, Field(gt=0, le=30000, description="Parcel weight.")],
    speed: Annotated[
        Literal["ground", "express", "overnight"], Field(description="Delivery speed.")
    ] = "ground",
) -> dict[str, int | str]:
    """Quote the shipping cost of a parcel to a US ZIP code.

    Prices are in cents and include fuel surcharge. Parcels over 30 kg must be split.
    """
    base = {"ground": 700, "express": 1500, "overnight": 3200}[speed]
    return {"speed": speed, "price_cents": base + weight_grams // 100}


_NOTES: dict[str, list[str]] = {"o-500": ["Customer asked for gift wrap."]}


@mcp.tool(
    annotations=ToolAnnotations(
        readOnlyHint=False, destructiveHint=True, idempotentHint=False, openWorldHint=False
    )
)
def manage_notes(
    action: Annotated[
        Literal["read", "append", "delete"],
        Field(description="read the notes, append one, or delete them all."),
    ],
    order_id: Annotated[str, Field(description="The order the notes belong to.")],
    text: Annotated[
        str | None, Field(min_length=1, description="The note to append (append only).")
    ] = None,
) -> list[str]:
    """Read, append to or delete the internal notes kept on an order.

    Notes are for the support team, never shown to the customer. ``append`` adds ``text``
    as a new note; ``delete`` removes every note of the order and cannot be undone.
    Returns the order's notes after the action.
    """
    notes = _NOTES.setdefault(order_id, [])
    if action == "append":
        if not text:
            raise ValueError("append needs text")
        notes.append(text)
    elif action == "delete":
        notes.clear()
    return list(notes)


if __name__ == "__main__":
    mcp.run()
