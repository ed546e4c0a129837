"""mcp-use: ``MCPAgent`` over an ``MCPClient`` built from a config dict, the documented path.

The client keeps one session per server; the agent (LangChain underneath) gets LangChain tools
built from the listing, plus mcp-use's own resource/prompt tools. The agent keeps its default
``max_steps`` unless the cell names the setting that changes it. The LLM is LangChain's
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
        # MCPAgent's default max_steps=5: its LangGraph recursion limit is 2 x max_steps
        # (mcpagent.py:134) and each tool round takes 4 supersteps (before_model, model,
        # after_model of its ModelCallLimitMiddleware, mcpagent.py:370, then tools), so it
        # allows one tool round and the answer. The documented setting "mcp-use-budget"
        # (docs/callers-and-hosts.md) sets max_steps=8: three rounds and the answer take 15.
        steps = {"max_steps": 8} if config.setting == "mcp-use-budget" else {}
        agent = MCPAgent(llm=ChatOpenAI(model="gpt-4o"), client=client, **steps)
        return str(await agent.run(config.task))
    finally:
        await client.close_all_sessions()


if __name__ == "__main__":
    main(run_agent)
