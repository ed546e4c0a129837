"""Semantic Kernel: ``MCPStreamableHttpPlugin`` / ``MCPStdioPlugin`` on a ``ChatCompletionAgent``.

The plugins are the documented MCP path (one long-lived session, opened by ``async with``);
the agent's default function choice (``Auto``) invokes the kernel functions the plugin
made from the listing. The chat service is ``OpenAIChatCompletion``, whose OpenAI client
reads ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` from the environment.
"""

from __future__ import annotations

from typing import Any

from _common import Config, main
from semantic_kernel.agents import ChatCompletionAgent
from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion
from semantic_kernel.connectors.mcp import MCPStdioPlugin, MCPStreamableHttpPlugin


async def run_agent(config: Config) -> str:
    plugin: Any
    if config.transport == "http":
        plugin = MCPStreamableHttpPlugin(name="order_desk", url=config.mcp_url)
    else:
        plugin = MCPStdioPlugin(name="order_desk", command=config.command[0],
                                args=config.command[1:])
    async with plugin:
        agent = ChatCompletionAgent(service=OpenAIChatCompletion(ai_model_id="gpt-4o"),
                                    name="assistant", instructions="Use the tools to help.",
                                    plugins=[plugin])
        response = await agent.get_response(messages=config.task)
        return str(response.content)


if __name__ == "__main__":
    main(run_agent)
