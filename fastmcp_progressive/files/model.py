"""What a description file may say about its tool: the pydantic model every file becomes.

Kept apart from reading and parsing so the fields a developer may write are listed in one
place, and so modules that only consume parsed files (the listing, pins, definitions,
the checker) depend on the model and nothing of how files are found or read.

Example:
    ```python
    file = DescriptionFile.model_validate({"name": "add", "summary": "Add two numbers."})
    file.fields()  # {"name": "add"}: what is merged over the registered definition
    ```
"""

from __future__ import annotations

import hashlib
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from fastmcp_progressive.files.rules import Rule

SUMMARY_MAX_CHARS = 200
MAX_GROUPS = 32
"""Most groups one file may put its tool (or group) in."""
GROUP_NAME_CHARS = 128


class Example(BaseModel):
    """One worked call of a tool."""

    model_config = ConfigDict(extra="allow")

    description: str
    input: dict[str, Any] = Field(default_factory=dict)
    explanation: str | None = None


class DescriptionFile(BaseModel):
    """What a description file may say about its tool; unknown keys are kept and served."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    name: str
    summary: str | None = Field(default=None, max_length=SUMMARY_MAX_CHARS)
    description: str | None = None
    input_schema: dict[str, Any] | None = Field(default=None, alias="inputSchema")
    output_schema: dict[str, Any] | None = Field(default=None, alias="outputSchema")
    examples: list[Example] | None = None
    usage_guidance: Any = None
    error_guidance: Any = None
    always_load: bool | None = None
    """True: list the tool in full and never gate it; False: never, whatever the tool says."""
    resolution: list[Rule] | None = None  # argument-dependent hints for tools/resolve (rules.py)
    groups: list[str] | None = Field(default=None, max_length=MAX_GROUPS)
    """The groups (``io.modelcontextprotocol/grouping``) the tool belongs to, on top of its
    FastMCP tags and its mount namespace; in a group's own file, the groups it nests in."""
    extracted_from: str | None = Field(default=None, pattern=r"^sha256:[0-9a-f]{64}$")
    """``sha256:`` of the registered description ``extract`` copied into this file
    (``registered_description_digest``): ``check`` warns when the tool's docstring has
    changed since, as this file's text then shadows the new one. Never served."""

    @field_validator("summary")
    @classmethod
    def _one_line(cls, value: str | None) -> str | None:
        return " ".join(value.split()) if value is not None else None

    @field_validator("groups")
    @classmethod
    def _group_names(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        for name in value:
            if not name.strip() or len(name) > GROUP_NAME_CHARS or not name.isprintable():
                raise ValueError(f"a group name is 1 to {GROUP_NAME_CHARS} printable "
                                 f"characters, not {name[:GROUP_NAME_CHARS]!r}")
        return list(dict.fromkeys(value))

    def fields(self) -> dict[str, Any]:
        """The fields to merge over the registered definition, wire-named, unset ones left out."""
        # the listing's, tools/resolve's, the grouping extension's _meta, `check`'s: not
        # part of the definition
        return self.model_dump(by_alias=True, exclude_none=True, mode="json", exclude={
            "summary", "always_load", "resolution", "groups", "extracted_from"})


def registered_description_digest(description: str | None) -> str:
    """What ``extracted_from`` records: ``sha256:`` of a tool's registered description as
    ``extract`` copies it (surrounding whitespace stripped)."""
    text = (description or "").strip()
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
