"""Deprecated path, kept for one release: use ``fastmcp_progressive.proxy.backend_sessions``."""

from fastmcp_progressive._deprecated import moved
from fastmcp_progressive.proxy.backend_sessions import *  # noqa: F403

moved(__name__)
