"""Python's ``json`` decoder's reasons as whole, translatable sentences.

``json.JSONDecodeError.msg`` is an English fragment meant to be followed by the position
("Unterminated string starting at: line 14 column 3 (char 290)"); shown after "(line 14, column 3):" it
read "…: Unterminated string starting at" and stopped (the new-user walkthrough of 2026-12, a config.json
cut at 300 characters; walk11), and it stayed English on the Chinese page. The messages are CPython's
``Lib/json/decoder.py`` and ``Modules/_json.c`` (3.11-3.13).
"""

from __future__ import annotations

from app.core.text import N_, Text

JSON_REASONS: dict[str, str] = {
    "Unterminated string starting at": N_("a string opens here and is never closed"),
    "Invalid control character at": N_("a raw control character (a tab or a line break) inside a string"),
    "Expecting value": N_("a value was expected here"),
    "Expecting ',' delimiter": N_("a ',' was expected here"),
    "Expecting ':' delimiter": N_("a ':' was expected here"),
    "Expecting property name enclosed in double quotes": N_(
        "a property name in double quotes was expected here"
    ),
    "Illegal trailing comma before end of object": N_("a comma before the object's closing brace"),
    "Illegal trailing comma before end of array": N_("a comma before the array's closing bracket"),
    "Extra data": N_("more text follows the end of the JSON value"),
    "Invalid \\escape": N_("an invalid backslash escape"),
    "Invalid \\uXXXX escape": N_("an invalid \\uXXXX escape"),
}


def json_reason(msg: str) -> str:
    """``json_reason("Unterminated string starting at")`` -> "a string opens here and is never closed";
    a message this table does not know keeps its words, without a dangling " at"."""
    known = JSON_REASONS.get(msg)
    if known is not None:
        return Text(known)
    return msg.removesuffix(" at")
