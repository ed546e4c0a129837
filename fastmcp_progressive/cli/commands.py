"""``fastmcp-progressive``: write, check and measure description files from a shell or CI.

Three commands, each taking SERVER the way ``fastmcp run`` does (``app.py``,
``app.py:mcp``, ``app.py:create_server`` or a ``fastmcp.json``) and loaded with FastMCP's
own loader, so a spec that runs also checks. The server is imported, never started: no
lifespan is entered and no port is opened.

- ``extract SERVER -o DIR``: one ``<tool>.json`` (or ``.md``) per tool with a proposed
  one-line summary; an existing file is never overwritten without ``--force``.
- ``check SERVER DIR``: every problem a file can have (rules in ``checks.py``), one per line as
  ``path:line:column: error: message``; exit status 1 when there is an error, so it can
  gate a user's CI (``--strict`` makes warnings count too).
- ``tokens SERVER [DIR]``: o200k_base tokens of ``tools/list`` without and with the
  middleware, and of each tool's full description (needs the ``bpe-openai`` package).
  SERVER may also be an ``mcpServers`` file or a URL, as ``fastmcp run`` takes them, or a
  command after ``--`` (``tokens [DIR] -- npx -y PACKAGE``): the gateway or proxy ``proxy``
  serves for it is counted against the plain listing, its upstreams started for the count
  (``servers.py``).
- ``proxy [options] -- COMMAND...`` / ``proxy [options] URL``: serve any MCP server, in any
  language, with progressive disclosure on (``proxy/front.py``); this one does start a server.

Exit status: 0 fine, 1 problems found, 2 could not run (usage, SERVER not loadable,
missing directory or dependency).

Example:
    ```console
    $ fastmcp-progressive extract app.py:mcp -o tool_descriptions
    $ fastmcp-progressive check app.py:mcp tool_descriptions
    $ python -m fastmcp_progressive tokens app.py:mcp tool_descriptions --json
    ```
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import shlex
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, get_args

from fastmcp.tools.base import Tool

from fastmcp_progressive.cli.argument_types import (
    listen,
    seconds_type,
    server_name,
    summary_chars,
    tool_cap,
)
from fastmcp_progressive.cli.checks import check
from fastmcp_progressive.cli.servers import (
    TOKENS_SERVER_HELP,
    CliError,
    counted_server,
    load_server,
)
from fastmcp_progressive.cli.tokens import (
    Tokens,
    TokensUnavailable,
    registered_tools,
    token_report,
)
from fastmcp_progressive.disclosure.cost import WHERE
from fastmcp_progressive.disclosure.listing import summarize
from fastmcp_progressive.files.folder import SUFFIXES, safe_file_name
from fastmcp_progressive.files.format import with_front_matter
from fastmcp_progressive.files.model import registered_description_digest
from fastmcp_progressive.proxy.front import (
    DEFAULT_REQUEST_TIMEOUT,
    DEFAULT_STARTUP_TIMEOUT,
    UpstreamError,
    is_url,
    serve,
)
from fastmcp_progressive.settings import (
    PROGRESSIVE_LEVELS,
    AnonymousPolicy,
    ClientSettings,
    ListingSettings,
)

OK, PROBLEMS, CANNOT_RUN = 0, 1, 2
DEFAULT_SUMMARY_CHARS = ListingSettings.summary_max_chars


# -- extract -----------------------------------------------------------------------------
def render(tool: Tool, suffix: str, summary_max_chars: int) -> str:
    """The text of a new description file for ``tool``: its name, summary and description."""
    description = (tool.description or "").strip()
    summary = summarize(description or tool.title, summary_max_chars)
    head: dict[str, Any] = {"name": tool.name}
    if summary:
        head["summary"] = summary
    head["extracted_from"] = registered_description_digest(tool.description)
    if suffix == ".md":
        return with_front_matter(json.dumps(head, indent=2, ensure_ascii=False), description)
    if description:
        head["description"] = description
    return json.dumps(head, indent=2, ensure_ascii=False) + "\n"


def extract(tools: dict[str, Tool], out: Path, *, suffix: str, force: bool,
            summary_max_chars: int) -> int:
    """Write one file per tool into ``out``; existing files are kept unless ``force``."""
    out.mkdir(parents=True, exist_ok=True)
    written = skipped = failed = 0
    for name, tool in tools.items():
        if not safe_file_name(name):
            _err(f"tool {name!r}: warning: its name cannot be a file name; not extracted")
            continue
        path = out / f"{name}{suffix}"
        existing = [out / f"{name}{s}" for s in SUFFIXES if (out / f"{name}{s}").exists()]
        if existing and not force:
            _out(f"skipped {existing[0]} (exists; --force overwrites)")
            skipped += 1
            continue
        try:
            _write(path, render(tool, suffix, summary_max_chars), replace=force)
        except OSError as exc:
            _err(f"{path}: error: {exc.strerror or exc}")
            failed += 1
            continue
        written += 1
        _out(f"wrote {path}")
        if suffix == ".md" and (out / f"{name}.json").exists():
            _err(f"{path}: warning: {name}.json exists and takes precedence over it")
    _out(f"{written} written, {skipped} skipped, {failed} failed")
    return PROBLEMS if failed else OK


def _write(path: Path, text: str, *, replace: bool) -> None:
    """Create ``path`` exclusively, or (``replace``) swap it in atomically for a live server."""
    if not replace:
        with open(path, "x", encoding="utf-8") as handle:
            handle.write(text)
        return
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


# -- tokens ------------------------------------------------------------------------------
def _print_tokens(report: dict[str, Any]) -> None:
    listing, extra = report["listing"], report["overhead"]
    saved = 1 - listing["with"] / listing["without"] if listing["without"] else 0.0
    _out(f"tools/list, {report['encoding']} tokens of the JSON result:")
    _out(f"  without progressive disclosure: {listing['without']:>7,}  "
         f"({listing['tools_without']} tools)")
    budgeted = listing["tools_with"] < listing["tools_without"]  # ListingSettings.max_tools
    _out(f"  with progressive disclosure:    {listing['with']:>7,}  "
         f"({listing['tools_with']} {'entries within the listing budget' if budgeted else 'tools'}"
         f"; {saved:.1%} fewer)")
    _out(f"  model-visible, per field (name + description + inputSchema): "
         f"{listing['fields_without']:,} -> {listing['fields_with']:,}")
    added = ", ".join(f"{WHERE[where]} {n:+,}" for where, n in extra.items())
    _out(f"  also added once per client: {added}")
    net = listing["without"] - listing["with"] - sum(extra.values())
    _out(f"  net per client: {'saves' if net >= 0 else 'COSTS'} {abs(net):,} tokens"
         + ("" if net >= 0 else " (the server logs this once at its first listing)"))
    _out("full description per tool (what resources/read returns):")
    width = max((len(n) for n in report["full_descriptions"]), default=4)
    for name, size in report["full_descriptions"].items():
        _out(f"  {name:<{width}}  {size['tokens']:>6,} tokens  {size['bytes']:>7,} bytes")


# -- entry point -------------------------------------------------------------------------
def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fastmcp-progressive",
        description="Write, check and measure progressive-disclosure description files.",
        epilog="Exit status: 0 fine, 1 problems found, 2 could not run.",
        allow_abbrev=False,
    )
    parser.add_argument("--version", action="version", version=version_line())
    sub = parser.add_subparsers(dest="command", required=True)
    spec_help = "the server, as `fastmcp run` takes it: app.py, app.py:mcp, fastmcp.json"

    p = sub.add_parser("extract", help="write one description file per tool",
                       allow_abbrev=False)
    p.add_argument("server", help=spec_help)
    p.add_argument("-o", "--output", required=True, type=Path, help="directory to write into")
    p.add_argument("--format", choices=("json", "md"), default="json")
    p.add_argument("--force", action="store_true", help="overwrite existing files")
    p.add_argument("--summary-max-chars", type=summary_chars, default=DEFAULT_SUMMARY_CHARS)

    p = sub.add_parser("check", help="report problems in a descriptions directory",
                       allow_abbrev=False)
    p.add_argument("server", help=spec_help)
    p.add_argument("directory", type=Path)
    p.add_argument("--summary-max-chars", type=summary_chars, default=DEFAULT_SUMMARY_CHARS,
                   help="longest summary the listing should show (the middleware's setting)")
    p.add_argument("--strict", action="store_true", help="warnings also fail")

    p = sub.add_parser("tokens", help="count listing and description tokens",
                       usage="%(prog)s [options] SERVER [DIRECTORY]  |  "
                             "%(prog)s [options] [DIRECTORY] -- COMMAND [ARG ...]",
                       allow_abbrev=False)
    p.add_argument("server", nargs="?", help=TOKENS_SERVER_HELP)
    p.add_argument("directory", type=Path, nargs="?")
    p.add_argument("--listing", choices=PROGRESSIVE_LEVELS, default=None)
    p.add_argument("--json", action="store_true", help="print the report as JSON")

    p = sub.add_parser(
        "proxy", help="serve MCP servers (commands, URLs, an mcpServers file) with progressive "
                      "disclosure",
        usage="%(prog)s [options] -- COMMAND [ARG ...]  |  %(prog)s [options] URL  |  "
              "%(prog)s [options] --config FILE",
        epilog="Every option can also be set in the environment as FASTMCP_PROGRESSIVE_<OPTION> "
               "(e.g. FASTMCP_PROGRESSIVE_CONFIG, FASTMCP_PROGRESSIVE_STARTUP_TIMEOUT; "
               "--exempt, --full-client: comma-separated; switches: 1/true), read as the option "
               "would be; a flag given on the command line wins.",
        allow_abbrev=False)
    _proxy_options(p)
    return parser


def _proxy_options(p: argparse.ArgumentParser) -> list[argparse.Action]:
    """Add ``proxy``'s arguments to ``p``; the options, which the environment reads too
    (``apply_environment``: the same parsers, choices and messages)."""
    p.add_argument("target", nargs="*", metavar="COMMAND|URL",
                   help="the upstream: a command speaking MCP over stdio (after --), or a URL")
    return [
        p.add_argument("--config", type=Path, metavar="FILE",
                       help="an mcpServers JSON file (Claude Desktop, Cursor, FastMCP "
                            "MCPConfig): serve every server in it, each under its name as a "
                            "namespace"),
        p.add_argument("--http", type=listen, metavar="[HOST:]PORT",
                       help="serve streamable HTTP (default: stdio)"),
        p.add_argument("--descriptions", type=Path, metavar="DIR",
                       help="description files for the upstream's tools (hot reload)"),
        p.add_argument("--listing", choices=PROGRESSIVE_LEVELS, default=ListingSettings.level),
        p.add_argument("--max-tools", type=tool_cap, metavar="N|auto|none",
                       default=ListingSettings.max_tools,
                       help="list at most N tools; the rest are reached through describe_tools "
                            "(groups) and run_tool (default: auto, every tool up to 50, else "
                            "at most 20; none: every tool)"),
        p.add_argument("--anonymous", choices=get_args(AnonymousPolicy),
                       help="callers no grant can follow (default: the middleware's)"),
        p.add_argument("--no-host-profiles", action="store_true",
                       help="progressive for every client, also hosts the table serves in "
                            "full; no host tool caps (--max-tools still applies)"),
        p.add_argument("--exempt", action="append", default=[], metavar="TOOL",
                       help="a tool listed in full and never gated (repeatable)"),
        p.add_argument("--full-client", action="append", default=[], metavar="GLOB",
                       help="clients (name or name/version glob, e.g. 'my-host*') served "
                            "in full: the upstream as it is, nothing gated (repeatable)"),
        p.add_argument("--dereference-schemas", action="store_true",
                       help="inline each $ref of the upstream's schemas, for clients that "
                            "cannot follow one (default: served as they are)"),
        p.add_argument("--no-host-origin-protection", action="store_true",
                       help="with --http: accept any Host and Origin header (default: a "
                            "loopback bind refuses other hosts, against DNS rebinding)"),
        p.add_argument("--name", type=server_name, help="the proxy's server name"),
        p.add_argument("--startup-timeout", type=seconds_type, default=DEFAULT_STARTUP_TIMEOUT,
                       metavar="SECONDS", help="time an upstream may take to start"),
        p.add_argument("--request-timeout", type=seconds_type, default=DEFAULT_REQUEST_TIMEOUT,
                       metavar="SECONDS", help="time one upstream request may take"),
    ]


ENV_PREFIX = "FASTMCP_PROGRESSIVE_"
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("", "0", "false", "no", "off")


def apply_environment(args: argparse.Namespace, given: Sequence[str],
                      environ: Mapping[str, str] | None = None) -> None:
    """``proxy`` options not given on the command line, from FASTMCP_PROGRESSIVE_<OPTION>.

    Each value goes through its option's own parser and choices (``_proxy_options``), so
    the environment accepts and refuses what the flag does; a bad value is named by its
    variable (exit status 2). The flag wins (abbreviations are off, so ``--max-t`` cannot
    pass for ``--max-tools``); an empty value leaves the option at its default.
    """
    environ = os.environ if environ is None else environ
    ours = given[: given.index("--")] if "--" in given else given  # not the upstream's own
    flags = {arg.split("=", 1)[0] for arg in ours if arg.startswith("--")}
    for action in _proxy_options(argparse.ArgumentParser(add_help=False)):
        variable = ENV_PREFIX + action.dest.upper()
        raw = environ.get(variable)
        if raw is None or flags.intersection(action.option_strings):
            continue
        try:
            value = _environment_value(action, raw)
        except (argparse.ArgumentTypeError, ValueError) as exc:
            raise CliError(f"{variable}={raw!r}: {exc}") from None
        setattr(args, action.dest, value)


def _environment_value(action: argparse.Action, raw: str) -> Any:
    """``raw`` as ``action`` would parse it on the command line (comma-separated for a
    repeatable option, 1/true or 0/false for a switch)."""
    if action.nargs == 0:  # a switch
        text = raw.strip().lower()
        if text not in _TRUE + _FALSE:
            raise ValueError("expected 1/true or 0/false")
        return text in _TRUE
    if not raw.strip():
        return action.default
    if isinstance(action.default, list):  # repeatable: comma-separated
        return [_one_value(action, part.strip()) for part in raw.split(",") if part.strip()]
    return _one_value(action, raw.strip())


def _one_value(action: argparse.Action, text: str) -> Any:
    value = action.type(text) if callable(action.type) else text
    if action.choices is not None and value not in action.choices:
        raise ValueError(f"expected one of {', '.join(map(str, action.choices))}")
    return value


def version_line() -> str:
    """``fastmcp-progressive X (FastMCP Y, MCP SDK Z)``."""
    from importlib.metadata import PackageNotFoundError, version

    import fastmcp

    def of(package: str) -> str:
        try:
            return version(package)
        except PackageNotFoundError:
            return "unknown"

    return (f"fastmcp-progressive {of('fastmcp-progressive')} (FastMCP {fastmcp.__version__}, "
            f"MCP SDK {of('mcp')})")


def _from_here(path: str | os.PathLike[str] | None) -> Path | None:
    """A path given on the command line, absolute: it means the working directory's
    (the middleware would resolve a relative one beside the file that builds it)."""
    return Path(path).absolute() if path is not None else None


async def _run_proxy(args: argparse.Namespace) -> int:
    """``proxy``: check the upstream(s), then serve until the client or a signal stops us."""
    target: str | list[str] | None = list(args.target) or None
    if args.config is not None and target is not None:
        raise CliError("give either --config FILE or an upstream (-- COMMAND, or URL), not both")
    if args.config is None and target is None:
        raise CliError("proxy needs an upstream: -- COMMAND [ARG ...], a URL, or --config FILE")
    if target is not None and len(target) == 1 and is_url(target[0]):
        target = target[0]
    try:
        http = args.http
        chosen: dict[str, Any] = {"anonymous": args.anonymous} if args.anonymous else {}
        if args.no_host_profiles:
            chosen["host_profiles"] = ()
        if args.full_client:
            chosen["full_clients"] = tuple(args.full_client)
        await serve(target, config=args.config, http=http,
                    host_origin_protection=False if args.no_host_origin_protection else "auto",
                    dereference_schemas=args.dereference_schemas,
                    descriptions_dir=_from_here(args.descriptions), name=args.name,
                    listing=ListingSettings(level=args.listing, max_tools=args.max_tools),
                    clients=ClientSettings(**chosen), exempt_tools=args.exempt,
                    startup_timeout=args.startup_timeout,
                    request_timeout=args.request_timeout)
    except (UpstreamError, ValueError) as exc:
        raise CliError(str(exc)) from None
    return OK


async def _run(args: argparse.Namespace) -> int:
    if args.command == "proxy":
        return await _run_proxy(args)
    if args.command == "tokens":
        return await _run_tokens(args)
    server = await load_server(args.server)
    if args.command == "extract":
        return extract(await registered_tools(server), args.output, suffix=f".{args.format}",
                       force=args.force, summary_max_chars=args.summary_max_chars)
    if args.command == "check":
        try:
            problems = check(await registered_tools(server), args.directory,
                             summary_max_chars=args.summary_max_chars)
        except NotADirectoryError as exc:
            raise CliError(str(exc)) from None
        for problem in problems:
            _out(str(problem))
        errors = sum(p.severity == "error" for p in problems)
        warnings = len(problems) - errors
        _out(f"{errors} error(s), {warnings} warning(s)")
        return PROBLEMS if errors or (args.strict and warnings) else OK
    raise AssertionError(f"unknown command {args.command!r}")  # argparse allows no other


async def _run_tokens(args: argparse.Namespace) -> int:
    """``tokens``: the listing without and with progressive disclosure, and each description."""
    try:
        tokens = Tokens()  # before any upstream starts
        async with counted_server(args.server) as server:
            report = await token_report(server, args.directory, args.listing, tokens)
    except TokensUnavailable as exc:
        raise CliError(f"`tokens` {exc}") from None
    if args.json:
        _out(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        _print_tokens(report)
    return OK


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the exit status (the console script passes it to exit)."""
    given = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s: %(message)s")
    try:
        args = _parse(parser, given)
        if args.command == "proxy":
            apply_environment(args, given)
        return asyncio.run(_run(args))
    except CliError as exc:
        _err(f"fastmcp-progressive: {exc}")
        return CANNOT_RUN
    except KeyboardInterrupt:  # Ctrl-C on a running `proxy`
        return OK
    except BrokenPipeError:  # `... | head`: the reader left; say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return OK


def _parse(parser: argparse.ArgumentParser, given: list[str]) -> argparse.Namespace:
    """The command line, with what a newcomer types for a command upstream made clear.

    ``tokens [DIR] -- COMMAND...`` counts a command as ``proxy -- COMMAND...`` serves it
    (argparse alone would take the command's first words for SERVER and DIR); ``proxy
    npx -y pkg`` without ``--`` is refused naming the fix, not as "unrecognized
    arguments: -y".
    """
    command = next((arg for arg in given if not arg.startswith("-")), None)
    upstream: list[str] = []
    if command == "tokens" and "--" in given:
        given, upstream = given[:given.index("--")], given[given.index("--") + 1:]
    args, unknown = parser.parse_known_args(given)
    ours = given[given.index("proxy") + 1:] if args.command == "proxy" else []
    target = getattr(args, "target", None)
    if unknown and target and "--" not in ours and not is_url(target[0]):
        start = _command_start(ours)
        raise CliError(
            f"{unknown[0]} is not an option of proxy; if it is one of the upstream command's, "
            "put -- before the command: fastmcp-progressive proxy "
            + shlex.join([*ours[:start], "--", *ours[start:]]))
    if unknown and args.command == "tokens":
        parser.error(f"unrecognized arguments: {' '.join(unknown)} (to count a command, put "
                     "-- before it: fastmcp-progressive tokens [DIRECTORY] -- COMMAND [ARG ...])")
    if unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    if args.command == "tokens":
        if upstream:
            if args.directory is not None:
                raise CliError("tokens takes a command after -- instead of SERVER: give "
                               "DIRECTORY alone before --")
            args.directory = Path(args.server) if args.server is not None else None
            args.server = upstream
        elif args.server is None:
            raise CliError("tokens needs a SERVER (app.py, app.py:mcp, fastmcp.json, an "
                           "mcpServers file or a URL) or, after --, a command: "
                           "fastmcp-progressive tokens -- npx -y PACKAGE")
    return args


def _command_start(proxy_args: list[str]) -> int:
    """Where the upstream command starts in ``proxy``'s arguments: the first that is
    neither one of our options nor an option's value."""
    takes_value = {option: action.nargs != 0
                   for action in _proxy_options(argparse.ArgumentParser(add_help=False))
                   for option in action.option_strings}
    at = 0
    while at < len(proxy_args):
        arg = proxy_args[at]
        if arg.split("=", 1)[0] not in takes_value:
            return at
        at += 2 if takes_value[arg.split("=", 1)[0]] and "=" not in arg else 1
    return at


def _out(line: str) -> None:
    print(line, flush=True)


def _err(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
