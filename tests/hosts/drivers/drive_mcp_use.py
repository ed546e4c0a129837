"""mcp-use: ``MCPAgent`` over an ``MCPClient`` built from a config dict, the documented path.

The client keeps one session per server; the agent (LangChain underneath) gets LangChain tools
built from the listing, plus mcp-use's own resource/prompt tools. The LLM is LangChain's
``ChatOpenAI`` (configured from ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``); telemetry is off
(no network here).
"""

from __future__ import annotations

import os

os.environ["MCP_USE_ANONYMIZED_TELEMETRY"] = "false"

from typing import Any

from _common import Config, main
from langchain_openai import ChatOpenAI
from mcp_use import MCPAgent, MCPClient


async def run_agent(config: Config) -> str:
    server: dict[str, Any] = ({"url": config.mcp_url} if config.transport == "http" else
                              {"command": config.command[0], "args": config.command[1:]})
    client = MCPClient.from_dict({"mcpServers": {"order_desk": server}})
    try:
        # max_steps=8: mcp-use's LangGraph recursion limit is 2 x max_steps (mcpagent.py:134),
        # but each tool round takes 4 supersteps (before_model, model, after_model of its
        # ModelCallLimitMiddleware, mcpagent.py:370, then tools): the default 5 allows one
        # tool round and an answer. Three rounds and an answer take 15 supersteps.
        agent = MCPAgent(llm=ChatOpenAI(model="gpt-4o"), client=client, max_steps=8)
        return str(await agent.run(config.task))
    finally:
        await client.close_all_sessions()


if __name__ == "__main__":
    main(run_agent)
