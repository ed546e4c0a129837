"""CrewAI 1.x: one agent, one task, one crew, over MCP two ways.

``crewai-adapter``: crewai-tools' ``MCPServerAdapter`` (mcpadapt; one session held open by
the ``with`` block) hands the agent its tools. ``crewai-mcps``: the agent's own
``mcps=[MCPServerHTTP(...)]`` / ``[MCPServerStdio(...)]`` field (CrewAI opens a client per
call). The LLM is ``LLM("openai/gpt-4o")`` pointed at the scripted endpoint; telemetry and
tracing are off (no network here). CrewAI is synchronous: the crew runs in a worker thread.

``mcps`` over stdio names each tool ``<command>_<args>_<tool>``, cut to 64 characters with a
hash: the harness's long server command (interpreter, script, log path) would leave no tool
name a model could recognise, so the driver starts the server through a short launcher
(``./order_desk``), as a user's ``npx some-server`` would read.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import tempfile
from pathlib import Path

os.environ.update({"CREWAI_DISABLE_TELEMETRY": "true", "OTEL_SDK_DISABLED": "true",
                   "CREWAI_TRACING_ENABLED": "false"})

from typing import Any

from _common import Config, main
from crewai import LLM, Agent, Crew, Task
from crewai.mcp import MCPServerHTTP, MCPServerStdio
from crewai_tools import MCPServerAdapter
from mcp import StdioServerParameters


def _crew(config: Config, **agent_options: Any) -> str:
    llm = LLM(model="openai/gpt-4o", base_url=config.model_url, api_key=config.api_key)
    agent = Agent(role="Assistant", goal="Answer the user's request with the tools.",
                  backstory="You help customers of an order desk.", llm=llm, **agent_options)
    task = Task(description=config.task, expected_output="The answer.", agent=agent)
    return str(Crew(agents=[agent], tasks=[task]).kickoff())


def _launcher(command: list[str]) -> str:
    """A short relative command that runs ``command`` (the process moves to its folder)."""
    folder = Path(tempfile.mkdtemp(prefix="crewai-"))
    launcher = folder / "order_desk"
    launcher.write_text(f"#!/bin/sh\nexec {shlex.join(command)}\n", encoding="utf-8")
    launcher.chmod(0o755)
    os.chdir(folder)
    return "./order_desk"


def _run(config: Config) -> str:
    if config.framework == "crewai-mcps":
        server: Any = (MCPServerHTTP(url=config.mcp_url) if config.transport == "http" else
                       MCPServerStdio(command=_launcher(config.command)))
        return _crew(config, mcps=[server])
    params: Any = ({"url": config.mcp_url, "transport": "streamable-http"}
                   if config.transport == "http" else
                   StdioServerParameters(command=config.command[0], args=config.command[1:]))
    with MCPServerAdapter(params, connect_timeout=60) as tools:
        return _crew(config, tools=list(tools))


async def run_agent(config: Config) -> str:
    return await asyncio.to_thread(_run, config)


if __name__ == "__main__":
    main(run_agent)
