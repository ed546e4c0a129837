"""How a description file's text is laid out: an optional BOM, then JSON or Markdown.

A ``.json`` file is one JSON object. A ``.md`` file is prose, optionally opened by a
front-matter block whose JSON carries the structured fields (no YAML dependency)::

    ---
    {"summary": "Create an invoice for a customer.", "examples": [...]}
    ---
    The Markdown body is the full description.

The parser, the code that points error messages at a key and ``extract`` (which writes
new files) all need the same layout, so it is written here and nowhere else.

Example:
    ```python
    layout("---\\n{\\"summary\\": \\"Hi.\\"}\\n---\\nBody.\\n", ".md")
    # Layout(json='{"summary": "Hi."}\\n', line_offset=1, body='Body.\\n')
    ```
"""

from __future__ import annotations

from dataclasses import dataclass

from fastmcp_progressive.files.errors import DescriptionError

BOM = "\ufeff"
FENCE = "---"


@dataclass(frozen=True)
class Layout:
    """A file's text cut into its parts (after any BOM)."""

    json: str | None
    """The JSON text: a whole ``.json`` file, or a Markdown file's front matter (None when
    the Markdown file has none)."""
    line_offset: int
    """Lines of the file before ``json`` starts (the opening fence), for error positions."""
    body: str
    """A Markdown file's prose after its front matter (all of it without one); "" for JSON."""


def layout(text: str, suffix: str) -> Layout:
    """Cut a file's text into its JSON part and prose.

    Raises ``DescriptionError`` for front matter that is opened and never closed.
    """
    text = text[1:] if text.startswith(BOM) else text  # editors on Windows write one
    if suffix != ".md":
        return Layout(json=text, line_offset=0, body="")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != FENCE:
        return Layout(json=None, line_offset=0, body=text)
    for end in range(1, len(lines)):
        if lines[end].strip() == FENCE:
            return Layout(json="".join(lines[1:end]), line_offset=1,
                          body="".join(lines[end + 1 :]))
    raise DescriptionError("line 1, column 1: front matter opened with '---' is never closed")


def with_front_matter(head: str, body: str) -> str:
    """A Markdown file's text from its front matter's JSON and its prose: ``layout``'s inverse."""
    return f"{FENCE}\n{head}\n{FENCE}\n" + (f"{body}\n" if body else "")
