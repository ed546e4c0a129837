"""AutoGen 0.7 (autogen-agentchat + autogen-ext[mcp]): an ``AssistantAgent`` over MCP, two ways.

``autogen-workbench``: the documented ``McpWorkbench`` (one session, opened by ``async with``)
passed as the agent's ``workbench``. ``autogen-tools``: ``mcp_server_tools`` adapters passed
as ``tools`` (each call opens its own session; the adapter rebuilds a pydantic model from the
listed schema and sends only the arguments it declares).

One setting departs from the defaults, for the baseline too: ``max_tool_iterations=3``. The
default (1) ends the run after one round of tool calls, so a model that is told to fetch a
definition first never gets to call again; a user of a progressive server must raise it.
The model client is ``OpenAIChatCompletionClient`` pointed at the scripted endpoint.
"""

from __future__ import annotations

from typing import Any

from _common import Config, main
from autogen_agentchat.agents import AssistantAgent
from autogen_ext.models.openai import OpenAIChatCompletionClient
from autogen_ext.tools.mcp import (
    McpWorkbench,
    StdioServerParams,
    StreamableHttpServerParams,
    mcp_server_tools,
)

MAX_TOOL_ITERATIONS = 3
"""What a user must set: the default of 1 leaves no round for the call after a refusal."""


async def run_agent(config: Config) -> str:
    params: Any
    if config.transport == "http":
        params = StreamableHttpServerParams(url=config.mcp_url)
    else:
        params = StdioServerParams(command=config.command[0], args=config.command[1:],
                                   read_timeout_seconds=60)
    client = OpenAIChatCompletionClient(model="gpt-4o", base_url=config.model_url,
                                        api_key=config.api_key)
    if config.framework == "autogen-tools":
        agent = AssistantAgent("assistant", model_client=client,
                               tools=await mcp_server_tools(params),  # type: ignore[arg-type]
                               max_tool_iterations=MAX_TOOL_ITERATIONS)
        return str((await agent.run(task=config.task)).messages[-1].to_text())
    async with McpWorkbench(params) as workbench:
        agent = AssistantAgent("assistant", model_client=client, workbench=workbench,
                               max_tool_iterations=MAX_TOOL_ITERATIONS)
        return str((await agent.run(task=config.task)).messages[-1].to_text())


if __name__ == "__main__":
    main(run_agent)
