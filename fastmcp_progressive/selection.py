"""Deprecated path, kept for one release: use ``fastmcp_progressive.disclosure.selection``."""

from fastmcp_progressive._deprecated import moved
from fastmcp_progressive.disclosure.selection import *  # noqa: F403

moved(__name__)
