"""LangChain MCP adapters + LangGraph: the documented ``MultiServerMCPClient`` paths.

``langchain``: ``get_tools()``, whose tools open a new MCP session for every call (the
adapters' default). ``langchain-session``: one long-lived session (``client.session(...)``
and ``load_mcp_tools(session)``, as the adapters' README shows for stateful servers). The
agent is LangGraph's prebuilt ReAct agent over ``ChatOpenAI`` (configured from the
environment: ``OPENAI_BASE_URL``, ``OPENAI_API_KEY``).
"""

from __future__ import annotations

from typing import Any

from _common import Config, main
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.tools import load_mcp_tools
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import create_react_agent


async def _answer(tools: list[Any], task: str) -> str:
    agent = create_react_agent(ChatOpenAI(model="gpt-4o"), tools)
    result = await agent.ainvoke({"messages": [{"role": "user", "content": task}]})
    return str(result["messages"][-1].content)


async def run_agent(config: Config) -> str:
    connection: dict[str, Any]
    if config.transport == "http":
        connection = {"transport": "streamable_http", "url": config.mcp_url}
    else:
        connection = {"transport": "stdio", "command": config.command[0],
                      "args": config.command[1:]}
    client = MultiServerMCPClient({"order_desk": connection})
    if config.framework == "langchain-session":
        async with client.session("order_desk") as session:
            return await _answer(await load_mcp_tools(session), config.task)
    return await _answer(await client.get_tools(), config.task)


if __name__ == "__main__":
    main(run_agent)
