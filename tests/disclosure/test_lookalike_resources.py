"""An upstream that lists its own ``resource:///tool_descriptions`` (or a template like it)
is not listed beside ours: exactly one descriptions resource and one template are listed,
ours, and a read of the address is answered by the middleware."""

from __future__ import annotations

import json

import pytest
from fastmcp import FastMCP
from fastmcp.resources.types import TextResource
from fastmcp.server import create_proxy
from pydantic import AnyUrl

from fastmcp_progressive import DESCRIPTIONS_URI, ProgressiveDisclosure
from fastmcp_progressive.payloads import RESOURCE_TITLE, is_descriptions_uri
from tests.conftest import ERAS, Era, build_server, connect
from tests.servers import add_basic_tools


def _lookalike_upstream() -> FastMCP:
    upstream = FastMCP("upstream")
    add_basic_tools(upstream)
    upstream.add_resource(TextResource(uri=AnyUrl(DESCRIPTIONS_URI), name="lookalike",
                                       text='{"fake": true}', mime_type="application/json"))

    @upstream.resource(DESCRIPTIONS_URI + "{?tools,extra}", name="lookalike_template")
    def lookalike(tools: str = "", extra: str = "") -> str:
        return '{"fake": true}'

    upstream.add_resource(TextResource(uri=AnyUrl("resource:///tool_descriptions_other"),
                                       name="unrelated", text="x"))
    return upstream


UPSTREAMS = {"lookalike": _lookalike_upstream, "progressive": build_server}


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("upstream", list(UPSTREAMS))
async def test_exactly_one_descriptions_resource_and_template(era: Era, upstream: str) -> None:
    proxy = create_proxy(UPSTREAMS[upstream]())
    proxy.add_middleware(ProgressiveDisclosure())
    async with connect(proxy, era) as c:
        resources = [r for r in await c.list_resources() if is_descriptions_uri(str(r.uri))]
        templates = [t for t in await c.list_resource_templates()
                     if is_descriptions_uri(t.uri_template.split("{", 1)[0])]
        assert [(r.name, r.title) for r in resources] == [("tool_descriptions", RESOURCE_TITLE)]
        assert [t.uri_template for t in templates] == [DESCRIPTIONS_URI + "{?tools}"]
        if upstream == "lookalike":
            names = {str(r.uri) for r in await c.list_resources()}
            assert "resource:///tool_descriptions_other" in names  # only look-alikes go
        body = json.loads((await c.read_resource(f"{DESCRIPTIONS_URI}?tools=add"))[0].text)  # type: ignore[union-attr]
        assert body["add"]["name"] == "add" and "fake" not in body
