"""LlamaIndex: ``McpToolSpec`` over the default ``BasicMCPClient``, and a ``FunctionAgent``.

``BasicMCPClient`` opens a new MCP session for every operation (its default). The LLM is
LlamaIndex's OpenAI integration, pointed at the scripted endpoint with ``api_base``.
"""

from __future__ import annotations

from _common import Config, main
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.llms.openai import OpenAI
from llama_index.tools.mcp import BasicMCPClient, McpToolSpec


async def run_agent(config: Config) -> str:
    if config.transport == "http":
        client = BasicMCPClient(config.mcp_url)
    else:
        client = BasicMCPClient(config.command[0], args=config.command[1:])
    tools = await McpToolSpec(client=client).to_tool_list_async()
    llm = OpenAI(model="gpt-4o", api_base=config.model_url, api_key=config.api_key)
    agent = FunctionAgent(tools=tools, llm=llm, system_prompt="Use the tools to help.")
    return str(await agent.run(config.task))


if __name__ == "__main__":
    main(run_agent)
