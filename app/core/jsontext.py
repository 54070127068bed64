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
    unescaped = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    outside = b"".join(unescaped.split(b'"')[0::2])
    steps = array("b", outside.translate(None, _NOT_BRACKET).translate(_OPEN_CLOSE))
    return max(0, max(accumulate(steps), default=0))


def json_depth_exceeds(data: bytes | str, limit: int = MAX_JSON_DEPTH) -> bool:
    """True when JSON text nests arrays/objects deeper than ``limit`` (see ``json_depth``)."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    return json_depth(raw) > limit
