"""The upstream command's stdout, read as one JSON-RPC message per line
(``command._read_messages``): lines split across reads or sharing one, blank lines, and
a long line costing what as many bytes of short lines cost (a 32 MB line took 2.6 to 7.5 s,
quadratic in its length, #34)."""

from __future__ import annotations

import json

import anyio
import mcp_types as mt
from mcp.shared.message import SessionMessage

from fastmcp_progressive.proxy.command import _read_messages
from tests.scaling import cpu_seconds

READ = 65_536  # what one read of a pipe gives at most (anyio's default)


class Chunks:
    """A byte stream handing out ``data`` in reads of ``size`` bytes, then its end."""

    def __init__(self, data: bytes, size: int = READ) -> None:
        self.data, self.size, self.at = memoryview(data), size, 0

    async def receive(self, max_bytes: int = READ) -> bytes:
        if self.at >= len(self.data):
            raise anyio.EndOfStream
        chunk = bytes(self.data[self.at:self.at + min(self.size, max_bytes)])
        self.at += len(chunk)
        return chunk


async def read_all(data: bytes, size: int = READ) -> list[SessionMessage | Exception]:
    send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](1_000)
    async with send, receive:
        await _read_messages(Chunks(data, size), send)  # type: ignore[arg-type]
        return [receive.receive_nowait() for _ in range(receive.statistics().current_buffer_used)]


def notification(data: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "method": "notifications/message",
                       "params": {"level": "info", "data": data}}).encode()


async def test_lines_split_across_reads_or_sharing_one_are_each_one_message() -> None:
    lines = [notification("a" * 10), notification("b" * 100), notification("c")]
    stream = lines[0] + b"\n\n" + lines[1] + b"\r\n  \n" + lines[2] + b"\nnot json\n" + b"{"
    for size in (1, 7, 64, READ):
        messages = await read_all(stream, size)
        assert len(messages) == 4, size  # the blank lines skipped; the unfinished `{` too
        data = [m.message.params["data"] for m in messages[:3]  # type: ignore[union-attr]
                if isinstance(m, SessionMessage) and isinstance(m.message,
                                                                mt.JSONRPCNotification)]
        assert data == ["a" * 10, "b" * 100, "c"], size
        assert isinstance(messages[3], ValueError)  # the session gets the bad line's error


async def test_a_long_line_costs_what_as_many_bytes_of_short_lines_cost() -> None:
    """One 32 MB line against sixteen 2 MB lines, the same bytes in the same 64 KiB reads:
    measured at 1.2 to 1.3 times the CPU time. Joining the unfinished line to each read and
    splitting it again made it about 16 times (the one line's reads copied 16 times the
    bytes). The lines are not JSON, so what is measured is the reading, not the parser."""
    one = b"x" * 31_999_999 + b"\n"
    sixteen = (b"x" * 1_999_999 + b"\n") * 16
    assert len(one) == len(sixteen)
    long_line = await cpu_seconds(lambda: read_all(one), runs=5)
    short_lines = await cpu_seconds(lambda: read_all(sixteen), runs=5)
    assert long_line < 4 * short_lines
