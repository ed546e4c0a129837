"""Deprecated path, kept for one release: use ``fastmcp_progressive.resolution.client``."""

from fastmcp_progressive._deprecated import moved
from fastmcp_progressive.resolution.client import *  # noqa: F403

moved(__name__)
