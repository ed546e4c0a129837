"""One replica: ``python replica_server.py PORT REDIS_URL [options]``.

Serves ``app.make_server`` over streamable HTTP on 127.0.0.1:PORT (uvicorn, path ``/mcp``)
with its grants in ``RedisStore(url=REDIS_URL)``; ``-`` as REDIS_URL keeps FastMCP's
default state store (no Redis). Logs go to stderr, which the tests read.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root

from key_value.aio.stores.redis import RedisStore

from fastmcp_progressive import GrantSettings, ProgressiveDisclosure
from tests.reliability.app import make_server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("port", type=int)
    parser.add_argument("redis_url")
    parser.add_argument("--descriptions", default=None)
    parser.add_argument("--shared-sessions", action="store_true")
    parser.add_argument("--on-store-error", choices=("open", "closed"), default="open")
    parser.add_argument("--store-timeout", type=float, default=2.0)
    parser.add_argument("--grant-ttl", type=float, default=3600.0)
    parser.add_argument("--no-watch", action="store_true", help="stop the file watcher")
    parser.add_argument("--hidden", action="store_true", help="add the hidden tools")
    args = parser.parse_args(argv)

    logging.basicConfig(
        level=logging.INFO, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s"
    )
    store = RedisStore(url=args.redis_url) if args.redis_url != "-" else None
    middleware = ProgressiveDisclosure(
        descriptions_dir=args.descriptions,
        grants=GrantSettings(
            store=store,
            shared_sessions=args.shared_sessions,
            on_store_error=args.on_store_error,
            store_timeout=args.store_timeout,
            ttl=args.grant_ttl,
        ),
    )
    if args.no_watch:
        middleware.close()
    server = make_server(middleware=middleware, hidden=args.hidden)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(server.run_http_async(
            host="127.0.0.1", port=args.port, path="/mcp", show_banner=False,
            log_level="warning",
        ))


if __name__ == "__main__":
    main()
