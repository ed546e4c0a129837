"""Pydantic AI 2.x: an ``Agent`` with an ``MCPToolset``, the documented defaults (but a
longer stdio start-up allowance).

The model is ``openai:...`` (the Responses API in 2.x), its client configured from the
environment (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``). Over stdio the toolset gets a stdio
transport for the server's own interpreter (a bare script path would run it with this
virtualenv's Python, which does not have the server's packages).
"""

from __future__ import annotations

from typing import Any

from _common import Config, main
from fastmcp.client.transports import StdioTransport
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset


async def run_agent(config: Config) -> str:
    target: Any = config.mcp_url
    options: dict[str, Any] = {}
    if config.transport == "stdio":
        target = StdioTransport(command=config.command[0], args=config.command[1:])
        # the only non-default: Pydantic AI gives a server 5 s to start and answer
        # `initialize`; a loaded 2-core CI machine needs longer just to import FastMCP.
        # It changes no protocol behaviour the matrix records.
        options["init_timeout"] = 60.0
    agent = Agent("openai:gpt-5", toolsets=[MCPToolset(target, **options)])
    async with agent:
        result = await agent.run(config.task)
    return str(result.output)


if __name__ == "__main__":
    main(run_agent)
