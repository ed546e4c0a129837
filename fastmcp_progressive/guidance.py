"""Deprecated path, kept for one release: use ``fastmcp_progressive.disclosure.guidance``."""

from fastmcp_progressive._deprecated import moved
from fastmcp_progressive.disclosure.guidance import *  # noqa: F403

moved(__name__)
