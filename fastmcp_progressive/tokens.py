"""Deprecated path, kept for one release: use ``fastmcp_progressive.cli.tokens``."""

from fastmcp_progressive._deprecated import moved
from fastmcp_progressive.cli.tokens import *  # noqa: F403

moved(__name__)
