"""Guidance for agents: a system-prompt text, and a helper that knows when to use it.

The extension only works well when the model understands that the one-line listing is
for choosing and the descriptions resource is for learning how to call (spec section 8).
Agent authors get three ways to say so: ``SYSTEM_PROMPT`` as a constant,
``agent_guidance(tools, resources)`` which detects a progressive server from its listings
and returns the text (or None), and the same text served by the server as the MCP prompt
``progressive_disclosure_guide``.

Example:
    ```python
    async with Client(server) as client:
        text = agent_guidance(await client.list_tools(), await client.list_resources())
        if text:
            system_prompt += "\\n\\n" + text
    ```
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from fastmcp.prompts import Message, PromptResult
from fastmcp.prompts.base import Prompt

from fastmcp_progressive.payloads import BRIDGE_TOOL_NAME, DESCRIPTIONS_URI, is_descriptions_uri

PROMPT_NAME = "progressive_disclosure_guide"


def system_prompt(bridge_tool: str | None = None) -> str:
    """The guidance text; names the bridge tool first when the server has one (it works in
    every host), the resource second (only some hosts let the model read resources)."""
    if bridge_tool:
        learn = (
            f'For the tool you chose, call {bridge_tool} with {{"tools": ["TOOL_NAME"]}}\n'
            f'   (several tools: {{"tools": ["A", "B"]}}). If you can read resources, reading\n'
            f"   {DESCRIPTIONS_URI}?tools=TOOL_NAME gives the same answer. If no listed tool\n"
            f'   fits, {bridge_tool} with {{"query": "what you need"}} gives the best matches.')
    else:
        learn = (f"For the tool you chose, read {DESCRIPTIONS_URI}?tools=TOOL_NAME\n"
                 "   (several tools: ?tools=A,B).")
    return f"""\
How to use this server's tools (progressive disclosure):
1. Choose. Each tool in the list has a one-line description. It tells you what the tool is
   for, and that is enough to decide which tool fits the task. Do not fetch details to
   decide.
2. Learn. {learn}
   It returns the parameters, examples and common errors.
3. Call the tool with the parameters you learned. A call made before step 2 answers
   TOOL_DESCRIPTION_REQUIRED and includes the tool's definition: call again with arguments
   that match it. It is a cue to use what it carries, not to give up.
Never read {DESCRIPTIONS_URI} without ?tools=: it does not list everything, it only
answers MISSING_TOOL_SELECTION."""


SYSTEM_PROMPT = system_prompt(BRIDGE_TOOL_NAME)
"""The guidance text for a server with the bridge tool on (the default)."""


def uses_progressive_disclosure(resources: Iterable[Any]) -> bool:
    """Whether a ``resources/list`` result includes the descriptions resource."""
    return any(is_descriptions_uri(str((resource.get("uri") if isinstance(resource, dict)
                                        else getattr(resource, "uri", None)) or ""))
               for resource in resources)


def agent_guidance(tools: Iterable[Any], resources: Iterable[Any]) -> str | None:
    """The system-prompt text for a server whose listings show progressive disclosure, else None.

    ``tools`` and ``resources`` are what the client listed (MCP models or plain dicts).
    The bridge tool is mentioned when the server lists one.
    """
    if not uses_progressive_disclosure(resources):
        return None
    names = {t.get("name") if isinstance(t, dict) else getattr(t, "name", None) for t in tools}
    return system_prompt(BRIDGE_TOOL_NAME if BRIDGE_TOOL_NAME in names else None)


def guidance_prompt(bridge_tool: str | None) -> Prompt:
    """The guidance as an MCP prompt, for hosts that let users pick server prompts."""
    text = system_prompt(bridge_tool)

    def progressive_disclosure_guide() -> PromptResult:
        return PromptResult([Message(text)])

    return Prompt.from_function(progressive_disclosure_guide, name=PROMPT_NAME,
                                description="How to use this server's tools.")
