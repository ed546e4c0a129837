"""OpenAI Agents SDK: one agent with one MCP server, the SDK's documented defaults.

The model client comes from the environment (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``) and
speaks the Responses API (the SDK's default); tracing is off (no network here).
"""

from __future__ import annotations

from typing import Any

from _common import Config, main
from agents import Agent, Runner
from agents.mcp import MCPServerStdio, MCPServerStreamableHttp


async def run_agent(config: Config) -> str:
    server: Any
    if config.transport == "http":
        server = MCPServerStreamableHttp(params={"url": config.mcp_url}, name="order-desk")
    else:
        server = MCPServerStdio(params={"command": config.command[0],
                                        "args": config.command[1:]}, name="order-desk")
    async with server:
        agent = Agent(name="assistant", instructions="Use the tools to help.",
                      mcp_servers=[server])
        result = await Runner.run(agent, config.task)
        return str(result.final_output)


if __name__ == "__main__":
    main(run_agent)
