"""The agent frameworks of the host matrix: their pinned packages and their drivers.

Each framework gets its own virtualenv (their ``mcp`` pins differ from each other and from
ours: LangChain's adapters still speak the handshake era on ``mcp`` 1.x, the others
2026-07-28 on ``mcp`` 2.x). Only the framework and its MCP adapter go in; the server under
test runs from the project's own environment. The pins are versions that install from the
package index this project's machines use; bump them deliberately (``make_venvs.py``
rebuilds a virtualenv whose pins changed).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
VENVS = HERE / ".venvs"
DRIVERS = HERE / "drivers"


@dataclass(frozen=True)
class Framework:
    """One agent framework: the name the matrix uses, its pins, its driver script."""

    name: str
    requirements: tuple[str, ...]
    driver: str
    environment: str = ""
    """The virtualenv's name when two MCP paths of one framework share it (else ``name``)."""
    setting: str = ""
    """The setting the documentation tells its users to make for more than its defaults
    give (``serve.SETTINGS``: the server half; the driver makes its own), which the matrix
    and the benchmark also run it with; "": none."""

    @property
    def venv(self) -> Path:
        return VENVS / (self.environment or self.name)

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def script(self) -> Path:
        return DRIVERS / self.driver


LANGCHAIN = ("langchain-mcp-adapters==0.3.2", "langgraph==1.2.22", "langchain-openai==1.7.3",
             "langchain-core==1.7.2", "mcp==1.30.0")
AUTOGEN = ("autogen-agentchat==0.7.5", "autogen-ext[mcp,openai]==0.7.5", "mcp==1.30.0",
           "openai==3.57.0")
CREWAI = ("crewai==1.15.30", "crewai-tools[mcp]==1.15.30", "mcpadapt==0.1.19", "mcp==1.30.0",
          "openai==2.54.0")
SEMANTIC_KERNEL = ("semantic-kernel[mcp]==1.45.0", "mcp==1.30.0", "openai==3.57.0")

FRAMEWORKS: tuple[Framework, ...] = (
    Framework("openai-agents", ("openai-agents==0.24.0", "mcp==2.3.0", "openai==3.54.0"),
              "drive_openai_agents.py"),
    Framework("pydantic-ai", ("pydantic-ai-slim[openai,mcp]==2.68.0", "fastmcp-slim==4.2.1",
                              "mcp==2.3.0"), "drive_pydantic_ai.py"),
    Framework("langchain", LANGCHAIN, "drive_langchain.py"),
    # the same adapters on one long-lived session (client.session + load_mcp_tools)
    Framework("langchain-session", LANGCHAIN, "drive_langchain.py", "langchain"),
    Framework("llama-index", ("llama-index-tools-mcp==0.6.0", "llama-index-llms-openai==0.8.3",
                              "llama-index-core==0.14.25", "mcp==2.3.0"),
              "drive_llama_index.py"),
    # mcpadapt (smolagents' and CrewAI's MCP adapter) and autogen-ext import only with mcp<2
    Framework("smolagents", ("smolagents[mcp,openai]==1.26.0", "mcpadapt==0.1.19",
                             "mcp==1.30.0", "openai==3.57.0"), "drive_smolagents.py"),
    Framework("semantic-kernel", SEMANTIC_KERNEL, "drive_semantic_kernel.py"),
    # the same plugin with the message_handler override a user sets (see the driver)
    Framework("semantic-kernel-relist", SEMANTIC_KERNEL, "drive_semantic_kernel.py",
              "semantic-kernel"),
    Framework("autogen-workbench", AUTOGEN, "drive_autogen.py", "autogen"),
    Framework("autogen-tools", AUTOGEN, "drive_autogen.py", "autogen"),
    Framework("crewai-adapter", CREWAI, "drive_crewai.py", "crewai"),
    Framework("crewai-mcps", CREWAI, "drive_crewai.py", "crewai"),
    Framework("mcp-use", ("mcp-use==1.7.1", "langchain-openai==1.7.4", "langchain-core==1.8.3",
                          "mcp==1.30.0", "openai==3.57.0"), "drive_mcp_use.py",
              setting="mcp-use-budget"),
)
BY_NAME = {framework.name: framework for framework in FRAMEWORKS}
