"""Deprecated path, kept for one release: use ``fastmcp_progressive.access.hosts``."""

from fastmcp_progressive._deprecated import moved
from fastmcp_progressive.access.hosts import *  # noqa: F403

moved(__name__)
