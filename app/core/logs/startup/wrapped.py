"""Lines a log viewer wrapped: put back together before the rules read them (issue 22, round 11).

A pane that frames each line in box-drawing bars (k9s, a TUI around kubectl logs) also wraps a long line inside
its box, so vLLM's one "non-default args: {…}" line (entrypoints/utils.py::log_non_default_args, 0.10–0.33:
``logger.info("non-default args: %s", args)``, a dict repr) arrives as several lines, the dict closed on the
last (vllm#27194: `'gpu_memory_utilization':  │` then `│ 0.95, 'enable_prefix_caching': True}`). The pieces
are joined while the dict's braces stay open, and only when they close before another log record begins: a
quote cut inside the dict is left as it is.

A page or terminal that hard-wraps at a fixed column cuts any long record, mid-word, into pieces of exactly that
width and a shorter last piece: ServerlessLLM's ROCm quick start (heldout-2026-12ze) prints V0's one
"Initializing an LLM engine (v0.6.6) with config: …" line (engine/llm_engine.py, one logger.info) as six 213-column
pieces and a 151-column tail, "tensor_para" ending one piece and "llel_size=1" starting the next. Such pieces are
joined back with nothing between them, but only after a record line and at least two more pieces of the record's
exact width, none of them a record of its own: one equal-width line after a record can be chance, three cannot. A
record that ends in blanks or a box bar is a pane padding its lines to its width, not a cut.
"""

from __future__ import annotations

from app.core import regex
from app.core.logs.reading import strip_ansi
from app.core.logs.startup.facts import BOX_BORDER, MAX_LINE_CHARS

NEEDLE = "non-default args: {"
MAX_WRAPPED_LINES = 40  # a few KB of args in a pane of ~120 columns; more is not one wrapped line
# a line that begins a log record of its own: a level and a date (INFO 10-20 03:21:02), after any prefix
_RECORD = regex.compile(r"\b(?:INFO|WARNING|ERROR|DEBUG|CRITICAL) \d\d-\d\d ")
RECORD_HEAD_CHARS = 160


def _clean(raw: str) -> str:
    return strip_ansi(raw[:MAX_LINE_CHARS]).strip().strip(BOX_BORDER).strip()


def _open_braces(text: str) -> int:
    return text.count("{") - text.count("}")


def join_wrapped_args(numbered: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """``numbered`` with each wrapped "non-default args" dict joined onto its first line; the lines it
    took become empty (the parser skips those), so every other line keeps its position."""
    out = list(numbered)
    i = 0
    while i < len(out):
        index, raw = out[i]
        head = _clean(raw)
        at = head.find(NEEDLE)
        if at < 0 or _open_braces(head[at:]) <= 0:
            i += 1
            continue
        joined, j = head, i + 1
        while j < len(out) and j - i <= MAX_WRAPPED_LINES and _open_braces(joined[at:]) > 0:
            piece = _clean(out[j][1])
            if _RECORD.search(piece[:RECORD_HEAD_CHARS]) is not None:
                break
            joined += piece  # a dict repr reads the same with or without the space the pane dropped
            j += 1
        if j > i + 1 and _open_braces(joined[at:]) == 0:
            out[i] = (index, joined)
            for k in range(i + 1, j):
                out[k] = (out[k][0], "")
            i = j
        else:
            i += 1
    return out


MIN_HARD_WRAP_COLUMNS = 80  # a terminal's narrowest wrap; shorter lines of equal length are common records
MIN_FULL_PIECES = 2  # full-width pieces after the record before the lines are taken for one cut line


def _width(raw: str) -> int:
    return len(raw.rstrip("\r\n"))


def _is_piece(raw: str, width: int | None) -> bool:
    """A cut piece: no log record of its own, and (for a full piece) the record's exact width."""
    text = raw.rstrip("\r\n")
    if _RECORD.search(text[:RECORD_HEAD_CHARS]) is not None or not text.strip():
        return False
    return width is None or len(text) == width


def join_hard_wrapped(numbered: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """``numbered`` with each record a fixed-column wrap cut into pieces joined onto its first line (the pieces'
    lines become empty, so every other line keeps its position); see the module docstring."""
    out = list(numbered)
    i = 0
    while i < len(out):
        head = out[i][1].rstrip("\r\n")
        width = len(head)
        if width < MIN_HARD_WRAP_COLUMNS or head[-1].isspace() or head[-1] in BOX_BORDER:
            i += 1  # a pane that pads its lines to its width (k9s's box) is not a cut
            continue
        if _RECORD.search(head[:RECORD_HEAD_CHARS]) is None:
            i += 1
            continue
        j = i + 1
        while j < len(out) and j - i <= MAX_WRAPPED_LINES and _is_piece(out[j][1], width):
            j += 1
        if j - i - 1 < MIN_FULL_PIECES:
            i += 1
            continue
        if j < len(out) and _width(out[j][1]) < width and _is_piece(out[j][1], None):
            j += 1  # the record's last, shorter piece
        joined = "".join(raw.rstrip("\r\n") for _, raw in out[i:j])
        out[i] = (out[i][0], joined)
        for k in range(i + 1, j):
            out[k] = (out[k][0], "")
        i = j
    return out
