"""Deprecated path, kept for one release: use ``fastmcp_progressive.access.caller``."""

from fastmcp_progressive._deprecated import moved
from fastmcp_progressive.access.caller import *  # noqa: F403

moved(__name__)
