"""Deprecated path, kept for one release: use ``fastmcp_progressive.proxy.gateway``."""

from fastmcp_progressive._deprecated import moved
from fastmcp_progressive.proxy.gateway import *  # noqa: F403

moved(__name__)
