"""Pydantic AI 2.x: an ``Agent`` with an ``MCPToolset``, the documented defaults (but a
longer start-up timeout).

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
    if config.transport == "stdio":
        target = StdioTransport(command=config.command[0], args=config.command[1:])
    # init_timeout: the documented default is 5 s, which a loaded test machine exceeds
    # just starting the server's interpreter over stdio; no middleware step is timed by it
    agent = Agent("openai:gpt-5", toolsets=[MCPToolset(target, init_timeout=60)])
    async with agent:
        result = await agent.run(config.task)
    return str(result.output)


if __name__ == "__main__":
    main(run_agent)
