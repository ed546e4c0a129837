"""Inlining ``$ref`` in JSON Schemas, the one rule for when a schema needs it.

Several hosts cannot follow ``$ref``, and both the full definition a client reads and the
``skeleton`` listing level show property types that may sit behind a reference, so every
schema we serve or compare is inlined through this function. A schema needs it when it
has ``$defs`` or mentions ``$ref`` anywhere (draft-07 ``definitions``, remote references,
which FastMCP's ``dereference_refs`` strips); one without either is returned as is. The
listing's hot path may skip the second test (``defs_only``), and says so where it does.

Example:
    ```python
    inline_refs({"$defs": {"N": {"type": "integer"}},
                 "properties": {"n": {"$ref": "#/$defs/N"}}})
    # {"properties": {"n": {"type": "integer"}}}
    ```
"""

from __future__ import annotations

import json
from typing import Any

from fastmcp.utilities.json_schema import dereference_refs


def inline_refs(schema: dict[str, Any], *, defs_only: bool = False) -> dict[str, Any]:
    """``schema`` with every ``$ref`` inlined (unchanged, not copied, when it has none).

    ``defs_only`` skips the scan for a ``$ref`` outside ``$defs`` (pydantic, and so FastMCP,
    always writes its references with ``$defs``): the ``skeleton`` listing level builds a
    schema for every fresh tool object a mounted or proxied server hands out, and the scan
    costs about five times the skeleton itself (six parameters: 21 us against 4.7 us).
    """
    if "$defs" in schema or (not defs_only and "$ref" in json.dumps(schema)):
        return dereference_refs(schema)
    return schema
