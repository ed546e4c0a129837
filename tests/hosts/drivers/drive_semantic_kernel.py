"""Semantic Kernel: ``MCPStreamableHttpPlugin`` / ``MCPStdioPlugin`` on a ``ChatCompletionAgent``.

The plugins are the documented MCP path (one long-lived session, opened by ``async with``);
the agent's default function choice (``Auto``) invokes the kernel functions the plugin
made from the listing. The chat service is ``OpenAIChatCompletion``, whose OpenAI client
reads ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` from the environment.

Two paths: ``semantic-kernel`` uses the plugin as shipped; ``semantic-kernel-relist`` uses
the override SK's own docstring invites (``MCPPluginBase.message_handler``, "subclass the
MCPPlugin and override this function"): on ``notifications/tools/list_changed`` it schedules
``load_tools()`` as a task instead of awaiting it inside the session's receive loop
(``semantic_kernel/connectors/mcp.py:525-526``), where the ``tools/list`` answer can never
be read: the shipped plugin deadlocks on that notification, from any server. The run is
bounded (``RUN_BOUND``) so a deadlock is reported instead of hanging the matrix.
"""

from __future__ import annotations

import asyncio
from typing import Any

from _common import Config, main
from mcp import types
from semantic_kernel.agents import ChatCompletionAgent
from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion
from semantic_kernel.connectors.mcp import MCPStdioPlugin, MCPStreamableHttpPlugin

RUN_BOUND = 30.0
"""Seconds before a run counts as deadlocked (a healthy capped run takes a few)."""
RELIST = "semantic-kernel-relist"
_reloads: set[asyncio.Task[None]] = set()


class _RelistInTask:
    """``tools/list_changed`` reloads the tools in a task (the receive loop stays free)."""

    async def message_handler(self, message: Any) -> None:
        if (isinstance(message, types.ServerNotification)
                and message.root.method == "notifications/tools/list_changed"):
            task = asyncio.get_running_loop().create_task(self.load_tools())  # type: ignore[attr-defined]
            _reloads.add(task)
            task.add_done_callback(_reloads.discard)
            return
        await super().message_handler(message)  # type: ignore[misc]


class RelistingHttpPlugin(_RelistInTask, MCPStreamableHttpPlugin):
    pass


class RelistingStdioPlugin(_RelistInTask, MCPStdioPlugin):
    pass


async def _run(config: Config) -> str:
    relist = config.framework == RELIST
    plugin: Any
    if config.transport == "http":
        http = RelistingHttpPlugin if relist else MCPStreamableHttpPlugin
        plugin = http(name="order_desk", url=config.mcp_url)
    else:
        stdio = RelistingStdioPlugin if relist else MCPStdioPlugin
        plugin = stdio(name="order_desk", command=config.command[0], args=config.command[1:])
    async with plugin:
        agent = ChatCompletionAgent(service=OpenAIChatCompletion(ai_model_id="gpt-4o"),
                                    name="assistant", instructions="Use the tools to help.",
                                    plugins=[plugin])
        response = await agent.get_response(messages=config.task)
        return str(response.content)


async def run_agent(config: Config) -> str:
    try:
        return await asyncio.wait_for(_run(config), RUN_BOUND)
    except TimeoutError:
        raise TimeoutError(f"no answer within {RUN_BOUND:.0f} s: deadlocked") from None


if __name__ == "__main__":
    main(run_agent)
