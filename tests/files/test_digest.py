"""The ``digest`` of a definition is the SHA-256 of its RFC 8785 (JCS) canonical JSON.

Vectors from RFC 8785 itself: the number forms of Appendix B (ECMAScript shortest
round-trip: ``1e+21``, ``0`` for ``-0``, no ``.0``), the sorting example of section 3.2.3
(keys ordered by UTF-16 code units, so an emoji's surrogates sort before U+FB33) and the
string escapes of section 3.2.2. Each expected digest is computed from the RFC's expected
bytes, never from the code under test; ``json.dumps(sort_keys=True)`` fails every one.
"""

from __future__ import annotations

import hashlib
import struct
from typing import Any

import pytest
from fastmcp import FastMCP

from fastmcp_progressive import ProgressiveDisclosure
from fastmcp_progressive.files.definitions import digest
from tests.conftest import ERAS, Era, answer_of, connect


def _sha(canonical: str) -> str:
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _double(bits: int) -> float:
    value: float = struct.unpack(">d", bits.to_bytes(8, "big"))[0]
    return value


# RFC 8785 Appendix B: IEEE 754 bit pattern -> the JCS number text
NUMBERS = [
    (0x0000000000000000, "0"),
    (0x8000000000000000, "0"),
    (0x0000000000000001, "5e-324"),
    (0x7FEFFFFFFFFFFFFF, "1.7976931348623157e+308"),
    (0x4340000000000000, "9007199254740992"),
    (0xC340000000000000, "-9007199254740992"),
    (0x4430000000000000, "295147905179352830000"),
    (0x44B52D02C7E14AF5, "9.999999999999997e+22"),
    (0x44B52D02C7E14AF6, "1e+23"),
    (0x444B1AE4D6E2EF50, "1e+21"),
    (0x444B1AE4D6E2EF4F, "999999999999999900000"),
    (0x3EB0C6F7A0B5ED8D, "0.000001"),
    (0x3EB0C6F7A0B5ED8C, "9.999999999999997e-7"),
    (0x41B3DE4355555553, "333333333.3333332"),
    (0x43143FF3C1CB0959, "1424953923781206.2"),
]


@pytest.mark.parametrize(("bits", "text"), NUMBERS, ids=[t for _, t in NUMBERS])
def test_numbers_take_their_rfc8785_form(bits: int, text: str) -> None:
    assert digest({"n": _double(bits)}) == _sha('{"n":' + text + "}")


def test_keys_sort_by_utf16_code_units() -> None:
    # RFC 8785 section 3.2.3
    definition = {
        "\u20ac": "Euro Sign",
        "\r": "Carriage Return",
        "\ufb33": "Hebrew Letter Dalet With Dagesh",
        "1": "One",
        "\U0001f600": "Emoji: Grinning Face",
        "\u0080": "Control",
        "\u00f6": "Latin Small Letter O With Diaeresis",
    }
    expected = (
        '{"\\r":"Carriage Return","1":"One","\u0080":"Control",'
        '"\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign",'
        '"\U0001f600":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}'
    )
    assert digest(definition) == _sha(expected)


def test_rfc8785_section_3_2_2_sample() -> None:
    definition = {
        "numbers": [333333333.33333329, 1e30, 4.50, 2e-3, 0.000000000000000000000000001],
        "string": "\u20ac$\u000f\u000aA'\u0042\u0022\u005c\\\"/",
        "literals": [None, True, False],
    }
    expected = (
        '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
        '"string":"\u20ac$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'
    )
    assert digest(definition) == _sha(expected)


def test_integral_floats_and_the_digest_field_itself() -> None:
    assert digest({"maximum": 10.0, "digest": "sha256:old"}) == _sha('{"maximum":10}')


def test_values_outside_i_json_still_have_a_digest() -> None:
    """A schema may hold an integer past 2**53 or a non-finite float: mapped, never a crash."""
    big: dict[str, Any] = {"maximum": 2**63}
    assert digest(big) == _sha('{"maximum":9223372036854776000}')
    assert digest({"maximum": float("inf")}) == _sha('{"maximum":"Infinity"}')
    assert digest({"x": [float("nan")]}) == _sha('{"x":["NaN"]}')
    assert digest({"huge": -(10**400)}) == _sha('{"huge":"-Infinity"}')


@pytest.mark.parametrize("era", ERAS)
async def test_served_digest_is_jcs_of_the_served_definition(era: Era) -> None:
    """A client recomputes the digest from what it was served, with any JCS library."""
    import rfc8785

    mcp = FastMCP("d")

    @mcp.tool
    def scale(factor: float = 1.0, label: str = "\u20ac\U0001f600") -> float:
        """Scale by a factor."""
        return factor

    mcp.add_middleware(ProgressiveDisclosure())
    async with connect(mcp, era) as client:
        result = await client.call_tool("describe_tools", {"tools": ["scale"]})
    definition = dict(answer_of(result)["scale"])
    served = definition.pop("digest")
    assert served == "sha256:" + hashlib.sha256(rfc8785.dumps(definition)).hexdigest()


# what almost every definition is: no floats, small integers, keys in the BMP. Written by
# json.dumps (five times faster than rfc8785): each must match rfc8785's bytes exactly
PLAIN = [
    {"name": "t", "inputSchema": {"type": "object", "properties": {"a": {"type": "integer",
                                                                        "maximum": 2**53 - 1}},
                                  "required": ["a"]}},
    {"s": "\u20ac$\u000f\u000aA'\u0042\u0022\u005c\\\"/\u007f\u2028\u2029\b\f\r\t\u0000\u001f"},
    {"emoji value": "\U0001f600", "\u00f6": 1, "\ufb33": 2, "\u20ac": 3, "\r": 4, "1": -5},
    {"nested": [[], {}, [None, True, False, -(2**53 - 1)], {"z": {"y": ["x"]}}]},
    {"\u0080": "Control", "a\u0000b": "NUL in a key", "": "empty key"},
]


@pytest.mark.parametrize("definition", PLAIN, ids=range(len(PLAIN)))
def test_plain_definitions_digest_as_rfc8785_does(definition: dict[str, Any]) -> None:
    import rfc8785

    assert digest(definition) == "sha256:" + hashlib.sha256(rfc8785.dumps(definition)).hexdigest()
