"""Token counts, defined once: o200k_base over compact JSON as a client received it.

Three views of a listing:

- **fields**: what the model is shown per tool, counted field by field:
  tokens(name) + tokens(description) + tokens(compact ``inputSchema``). Hosts turn a
  listing into their own function-declaration format, so JSON syntax around the three
  fields is not what the model pays for. This is the README's count (github, plain:
  24,116);
- **json**: the same three fields as one compact JSON array of objects, keys and
  punctuation included (the issue's count: github, plain: 25,136);
- **wire**: the whole JSON-RPC result as the client's ``mcp`` types dump it
  (``by_alias``, ``exclude_none``), every field a host could forward.

A resource read or a search adds its text content (what a host hands the model) to the
model counts, and its whole result to the wire count.

JSON is ``json.dumps(payload, separators=(",", ":"))``: compact, with Python's default
ASCII escaping, the form both reference numbers above used (UTF-8 as sent by the server
differs by under 0.2%: github plain 25,103 instead of 25,136). The tokenizer is
``bpe_openai.get_encoding("o200k_base")``: offline, no downloads.

Example:
    ```python
    count({"name": "get_me"})          # tokens of '{"name":"get_me"}'
    listing_field_tokens(tools)        # per-field model-visible tokens of a listing
    ```
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any, Protocol

ENCODING = "o200k_base"
MODEL_FIELDS = ("name", "description", "inputSchema")


class _Encoder(Protocol):
    def encode(self, text: str) -> list[int]: ...


@cache
def encoder() -> _Encoder:
    """The o200k_base encoder (loaded once; bpe-openai ships its tables)."""
    import bpe_openai

    enc: _Encoder = bpe_openai.get_encoding(ENCODING)
    return enc


def compact(payload: Any, *, ascii: bool = True) -> str:
    """``payload`` as compact JSON."""
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=ascii)


def count_text(text: str) -> int:
    """Tokens of one string."""
    return len(encoder().encode(text))


def count(payload: Any, *, ascii: bool = True) -> int:
    """Tokens of ``payload`` as compact JSON."""
    return count_text(compact(payload, ascii=ascii))


def model_view(tool: dict[str, Any]) -> dict[str, Any]:
    """The fields of a listed tool a model is given: name, description, inputSchema."""
    return {key: tool[key] for key in MODEL_FIELDS if key in tool}


def listing_json_tokens(tools: list[dict[str, Any]], *, ascii: bool = True) -> int:
    """Model-visible tokens of a listing as one JSON array of each tool's model view."""
    return count([model_view(t) for t in tools], ascii=ascii)


def listing_field_tokens(tools: list[dict[str, Any]]) -> int:
    """Model-visible tokens of a listing counted per field: name, description, schema."""
    return sum(
        count_text(t["name"]) + count_text(t.get("description") or "")
        + count(t.get("inputSchema", {}))
        for t in tools
    )
