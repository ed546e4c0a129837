"""LangChain MCP adapters + LangGraph: the documented ``MultiServerMCPClient.get_tools()`` path.

``get_tools()`` tools open a new MCP session for every call (the adapters' default); the
agent is LangGraph's prebuilt ReAct agent over ``ChatOpenAI`` (configured from the
environment: ``OPENAI_BASE_URL``, ``OPENAI_API_KEY``).
"""

from __future__ import annotations

from typing import Any

from _common import Config, main
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import create_react_agent


async def run_agent(config: Config) -> str:
    connection: dict[str, Any]
    if config.transport == "http":
        connection = {"transport": "streamable_http", "url": config.mcp_url}
    else:
        connection = {"transport": "stdio", "command": config.command[0],
                      "args": config.command[1:]}
    client = MultiServerMCPClient({"order_desk": connection})
    tools = await client.get_tools()
    agent = create_react_agent(ChatOpenAI(model="gpt-4o"), tools)
    result = await agent.ainvoke({"messages": [{"role": "user", "content": config.task}]})
    return str(result["messages"][-1].content)


if __name__ == "__main__":
    main(run_agent)
