"""JSON text checked before ``json.loads``: how deep it nests, in linear time.

``json.loads`` recurses once per nested array or object, so ``"[" * 100_000`` raises RecursionError
(a 500) before it notices anything wrong; every reader of untrusted JSON (request bodies in
``app.web.security``, pasted configs, files fetched by ``app.hub``) checks the depth first.
"""

from __future__ import annotations

from array import array
from itertools import accumulate

# Real configs nest a few levels (a multimodal config.json ~5); 64 is far above any, and far below
# the recursion limit (1,000).
MAX_JSON_DEPTH = 64

_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")
_OPEN_CLOSE = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")  # +1 / -1 as signed bytes


# Values a request body may hold outside its strings (arrays, objects and the commas between items):
# the API's bodies are flat objects of parameters with a pasted config as a string (tens of values);
# 100 measured runs are a few thousand; a --save-result of 1,000 prompts x 256 tokens pasted as an
# object ~260,000. ``json.loads`` builds one Python object per value, on the event loop (FastAPI
# parses a JSON body there): 4 million of them in a 6 MB body were ~0.4 s of the loop's CPU.
MAX_JSON_VALUES = 500_000


def _outside_strings(raw: bytes) -> bytes:
    """The text outside JSON strings (escapes first, then every other piece between quotes)."""
    unescaped = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    return b"".join(unescaped.split(b'"')[0::2])


def json_values(data: bytes | str) -> int:
    """An upper bound on the values JSON text holds, in linear time: the brackets and commas outside
    its strings, plus one. E.g. ``{"a": [1, 2], "b": "x,y"}``: 2 openings + 2 commas + 1 = 5."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    outside = _outside_strings(raw)
    return outside.count(b",") + outside.count(b"[") + outside.count(b"{") + 1


def json_values_exceed(data: bytes | str, limit: int = MAX_JSON_VALUES) -> bool:
    """True when JSON text holds more than ``limit`` values (see ``json_values``)."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if raw.count(b",") + raw.count(b"[") + raw.count(b"{") < limit:  # strings only add to this count
        return False
    return json_values(raw) > limit


def json_depth(data: bytes | str) -> int:
    """How deep JSON text nests arrays/objects, in linear time (each pass is one C-speed scan).

    1. Escapes that matter go first: ``\\\\`` pairs, then ``\\"`` (left to right, as JSON pairs them),
       so an escaped quote never ends a string.
    2. The quotes left alternate open/close: the text outside strings is every other piece of a
       split on ``"``.
    3. Of that, only brackets are kept; the depth is the largest running sum of +1 per opening and
       -1 per closing bracket.

    Unbalanced openings (invalid JSON) count too, because ``json.loads("[" * 100_000)`` recurses
    before it notices the brackets never close. A backslash outside a string is invalid JSON that
    the parser rejects where it stands, so whatever it hides from this count is never reached.
    The regex this replaces restarted inside escaped quotes: quadratic (32 kB took 2.9 s).
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    steps = array("b", _outside_strings(raw).translate(None, _NOT_BRACKET).translate(_OPEN_CLOSE))
    return max(0, max(accumulate(steps), default=0))


def json_depth_exceeds(data: bytes | str, limit: int = MAX_JSON_DEPTH) -> bool:
    """True when JSON text nests arrays/objects deeper than ``limit`` (see ``json_depth``)."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    return json_depth(raw) > limit
