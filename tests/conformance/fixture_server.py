"""A FastMCP server with every tool, resource, prompt and completion the official MCP
conformance suite's server scenarios call (``@modelcontextprotocol/conformance``, pinned in
``tests/conformance/suite.py``), as the MCP SDKs keep an "everything server" for it.

Run as a process: ``python -m tests.conformance.fixture_server [--http PORT] [--middleware
none|default|full]`` (stdio without ``--http``: how the proxy runs it as its upstream).
``--middleware default`` adds ``ProgressiveDisclosure()``; ``full`` adds it with the suite's
client (``conformance-*``) in ``full_clients``. Over HTTP it binds 127.0.0.1 with FastMCP's
Host/Origin protection (``host_origin_protection="auto"``), which the suite's
``dns-rebinding-protection`` scenario checks. Schemas are served as registered
(``dereference_schemas=False``): ``json-schema-2020-12`` reads ``$schema``, ``$defs`` and
``additionalProperties`` off the listing.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
from typing import Any

import mcp_types as mt
from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.prompts import Message
from fastmcp.resources import ResourceContent, ResourceResult
from fastmcp.tools import FunctionTool

from fastmcp_progressive import ClientSettings, ProgressiveDisclosure
from fastmcp_progressive.fastmcp_internals import serve_method

SUITE_CLIENTS = ("conformance-*",)
"""The names the suite's clients introduce themselves with (``conformance-test-client``,
``conformance-dns-rebinding-test``)."""
RED_PIXEL = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElF"
             "TkSuQmCC")
SILENT_WAV = base64.b64encode(
    b"RIFF" + (36 + 2).to_bytes(4, "little") + b"WAVEfmt " + (16).to_bytes(4, "little")
    + (1).to_bytes(2, "little") + (1).to_bytes(2, "little") + (8000).to_bytes(4, "little")
    + (16000).to_bytes(4, "little") + (2).to_bytes(2, "little") + (16).to_bytes(2, "little")
    + b"data" + (2).to_bytes(4, "little") + b"\x00\x00").decode()
STEP = 0.05
"""The pause the scenarios ask for between a tool's log messages and progress steps."""
JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {"address": {"type": "object", "properties": {
        "street": {"type": "string"}, "city": {"type": "string"}}}},
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
    "additionalProperties": False,
}


def _text(text: str) -> mt.TextContent:
    return mt.TextContent(type="text", text=text)


def _image() -> mt.ImageContent:
    return mt.ImageContent(type="image", data=RED_PIXEL, mime_type="image/png")


def _embedded(uri: str, text: str, mime_type: str = "text/plain") -> mt.EmbeddedResource:
    return mt.EmbeddedResource(type="resource", resource=mt.TextResourceContents(
        uri=uri, mime_type=mime_type, text=text))


async def _elicit(ctx: Context, message: str, schema: dict[str, Any]) -> str:
    answer = await ctx.session.elicit_form(message, schema, related_request_id=ctx.request_id)
    return f"User response: action={answer.action}, content={json.dumps(answer.content)}"


def add_tools(mcp: FastMCP) -> None:
    @mcp.tool(description="Returns a simple text response")
    def test_simple_text() -> list[mt.ContentBlock]:
        return [_text("This is a simple text response for testing.")]

    @mcp.tool(description="Returns an image")
    def test_image_content() -> list[mt.ContentBlock]:
        return [_image()]

    @mcp.tool(description="Returns audio")
    def test_audio_content() -> list[mt.ContentBlock]:
        return [mt.AudioContent(type="audio", data=SILENT_WAV, mime_type="audio/wav")]

    @mcp.tool(description="Returns an embedded resource")
    def test_embedded_resource() -> list[mt.ContentBlock]:
        return [_embedded("test://embedded-resource", "This is an embedded resource content.")]

    @mcp.tool(description="Returns text, an image and a resource")
    def test_multiple_content_types() -> list[mt.ContentBlock]:
        return [_text("Multiple content types test:"), _image(),
                _embedded("test://mixed-content-resource", '{"test":"data","value":123}',
                          "application/json")]

    @mcp.tool(description="Sends three log messages while it runs")
    async def test_tool_with_logging(ctx: Context) -> str:
        await ctx.info("Tool execution started")
        await asyncio.sleep(STEP)
        await ctx.info("Tool processing data")
        await asyncio.sleep(STEP)
        await ctx.info("Tool execution completed")
        return "Tool with logging executed"

    @mcp.tool(description="Reports progress 0, 50 and 100 of 100")
    async def test_tool_with_progress(ctx: Context) -> str:
        for done in (0, 50, 100):
            await ctx.report_progress(done, 100)
            if done < 100:
                await asyncio.sleep(STEP)
        return "Tool with progress executed"

    @mcp.tool(description="Always fails")
    def test_error_handling() -> str:
        raise ToolError("This tool intentionally returns an error for testing")

    @mcp.tool(description="Asks the client to sample")
    async def test_sampling(prompt: str, ctx: Context) -> str:
        result = await ctx.session.create_message(
            [mt.SamplingMessage(role="user", content=_text(prompt))], max_tokens=100,
            related_request_id=ctx.request_id)
        content = result.content
        return f"LLM response: {getattr(content, 'text', content)}"

    @mcp.tool(description="Asks the client for a username and an email")
    async def test_elicitation(message: str, ctx: Context) -> str:
        return await _elicit(ctx, message, {"type": "object", "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"}},
            "required": ["username", "email"]})

    @mcp.tool(description="Elicits fields with defaults (SEP-1034)")
    async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
        return await _elicit(ctx, "Please review and update the form fields with defaults", {
            "type": "object", "properties": {
                "name": {"type": "string", "description": "User name", "default": "John Doe"},
                "age": {"type": "integer", "description": "User age", "default": 30},
                "score": {"type": "number", "description": "User score", "default": 95.5},
                "status": {"type": "string", "description": "User status",
                           "enum": ["active", "inactive", "pending"], "default": "active"},
                "verified": {"type": "boolean", "description": "Verification status",
                             "default": True}}})

    @mcp.tool(description="Elicits every enum form (SEP-1330)")
    async def test_elicitation_sep1330_enums(ctx: Context) -> str:
        options = [{"const": f"value{i}", "title": f"Value {i}"} for i in (1, 2, 3)]
        return await _elicit(ctx, "Please select options from the enum fields", {
            "type": "object", "properties": {
                "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                "titledSingle": {"type": "string", "oneOf": options},
                "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                               "enumNames": ["Option One", "Option Two", "Option Three"]},
                "untitledMulti": {"type": "array", "items": {
                    "type": "string", "enum": ["option1", "option2", "option3"]}},
                "titledMulti": {"type": "array", "items": {"anyOf": options}}}})

    @mcp.tool(description="Answers after a pause (SSE polling)")
    async def test_reconnection() -> str:
        await asyncio.sleep(STEP)
        return "Reconnection test completed successfully"

    def json_schema_2020_12_tool(name: str, address: dict[str, Any] | None = None) -> str:
        return f"received {name}"

    tool = FunctionTool.from_function(
        json_schema_2020_12_tool, description="Takes a JSON Schema 2020-12 input schema")
    mcp.add_tool(tool.model_copy(update={"parameters": JSON_SCHEMA_2020_12}))


def add_resources(mcp: FastMCP) -> None:
    @mcp.resource("test://static-text", name="Static Text Resource", mime_type="text/plain",
                  description="A static text resource for testing")
    def static_text() -> str:
        return "This is the content of the static text resource."

    @mcp.resource("test://static-binary", name="Static Binary Resource",
                  mime_type="image/png", description="A static binary resource (image)")
    def static_binary() -> ResourceResult:
        return ResourceResult([ResourceContent(base64.b64decode(RED_PIXEL),
                                               mime_type="image/png")])

    @mcp.resource("test://template/{id}/data", name="Resource Template",
                  mime_type="application/json",
                  description="A resource template with parameter substitution")
    def template(id: str) -> str:
        return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})

    @mcp.resource("test://watched-resource", name="Watched Resource", mime_type="text/plain",
                  description="A resource that can be subscribed to")
    def watched() -> str:
        return "Watched resource content"

    subscribed: set[str] = set()

    async def subscribe(_ctx: Any, params: mt.SubscribeRequestParams) -> mt.EmptyResult:
        subscribed.add(str(params.uri))
        return mt.EmptyResult()

    async def unsubscribe(_ctx: Any, params: mt.UnsubscribeRequestParams) -> mt.EmptyResult:
        subscribed.discard(str(params.uri))
        return mt.EmptyResult()

    @mcp.tool(description="Says test://watched-resource changed (not a scenario's: for "
                          "tests/proxy/test_mirrored.py)")
    async def touch_watched_resource(ctx: Context) -> str:
        await ctx.session.send_resource_updated("test://watched-resource")
        return "touched"

    @mcp.tool(description="The URIs subscribed to (not a scenario's)")
    def subscriptions() -> list[str]:
        return sorted(subscribed)

    serve_method(mcp, "resources/subscribe", mt.SubscribeRequestParams, subscribe)
    serve_method(mcp, "resources/unsubscribe", mt.UnsubscribeRequestParams, unsubscribe)


def add_prompts(mcp: FastMCP) -> None:
    @mcp.prompt(description="A simple prompt without arguments")
    def test_simple_prompt() -> str:
        return "This is a simple prompt for testing."

    @mcp.prompt(description="A prompt with required arguments")
    def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
        return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"

    @mcp.prompt(description="A prompt with an embedded resource")
    def test_prompt_with_embedded_resource(resourceUri: str) -> list[Message]:
        return [Message(_embedded(resourceUri, "Embedded resource content for testing.")),
                Message("Please process the embedded resource above.")]

    @mcp.prompt(description="A prompt with an image")
    def test_prompt_with_image() -> list[Message]:
        return [Message(_image()), Message("Please analyze the image above.")]

    @mcp.completion
    def complete(ref: Any, argument: mt.CompletionArgument, _context: Any) -> list[str]:
        if getattr(ref, "name", None) == "test_prompt_with_arguments":
            return [v for v in ("paris", "park", "party", "test-value")
                    if v.startswith(argument.value)]
        return []


def fixture_server(middleware: str = "none") -> FastMCP:
    """The fixture, with ``middleware`` ``none``, ``default`` or ``full`` (see above)."""
    mcp = FastMCP("mcp-conformance-test-server", version="1.0.0", dereference_schemas=False)
    add_tools(mcp)
    add_resources(mcp)
    add_prompts(mcp)
    if middleware == "default":
        mcp.add_middleware(ProgressiveDisclosure())
    elif middleware == "full":
        mcp.add_middleware(ProgressiveDisclosure(
            clients=ClientSettings(full_clients=SUITE_CLIENTS)))
    return mcp


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--http", type=int, metavar="PORT")
    parser.add_argument("--middleware", choices=("none", "default", "full"), default="none")
    args = parser.parse_args()
    server = fixture_server(args.middleware)
    if args.http is None:
        server.run(show_banner=False)
    else:
        server.run(transport="http", host="127.0.0.1", port=args.http, show_banner=False,
                   host_origin_protection="auto")


if __name__ == "__main__":
    main()
