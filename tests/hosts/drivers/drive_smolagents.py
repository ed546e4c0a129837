"""smolagents: ``MCPClient`` (mcpadapt) tools on a ``ToolCallingAgent``, documented defaults.

``MCPClient`` is a context manager that keeps one MCP session open (in its own thread) and
yields smolagents ``Tool`` objects whose inputs mcpadapt builds from the listed
``properties``; ``ToolCallingAgent`` is the agent that sends tools to the model as function
definitions (the default ``CodeAgent`` writes Python instead). The model is
``OpenAIServerModel`` pointed at the scripted endpoint. smolagents is synchronous: the run
happens in a worker thread.
"""

from __future__ import annotations

import asyncio
from typing import Any

from _common import Config, main
from mcp import StdioServerParameters
from smolagents import MCPClient, OpenAIServerModel, ToolCallingAgent


def _run(config: Config) -> str:
    server: Any
    if config.transport == "http":
        server = {"url": config.mcp_url, "transport": "streamable-http"}
    else:
        server = StdioServerParameters(command=config.command[0], args=config.command[1:])
    with MCPClient(server, structured_output=False) as tools:
        model = OpenAIServerModel("gpt-4o", api_base=config.model_url, api_key=config.api_key)
        agent = ToolCallingAgent(tools=tools, model=model)
        return str(agent.run(config.task))


async def run_agent(config: Config) -> str:
    return await asyncio.to_thread(_run, config)


if __name__ == "__main__":
    main(run_agent)
