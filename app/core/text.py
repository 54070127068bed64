"""Human sentences that an edge can translate, without the core knowing about languages.

A :func:`Text` (a :class:`Message`) *is* the English sentence (a ``str``: comparisons, ``in``, JSON and the CLI see
English, exactly as before) and also remembers its message id and parameters, so the web layer can
render it through a catalog: ``gettext(msgid).format(**params)``. Message ids use ``str.format``
fields with their format spec (``"{tokens:,} tokens"``), so a translation keeps the number formats.
Extraction (scripts/extract_messages.py) finds ``Text("…")`` and ``N_("…")`` calls in app/.

:class:`TextList` is a list of sentences joined by a separator (``"; "``) — translated part by part.
Pydantic turns ``str`` subclasses into plain ``str``; fields that carry a Text use :data:`Msg`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Annotated, Any

from pydantic import PlainValidator

Gettext = Callable[[str], str]


def N_(msgid: str) -> str:
    """Marks a constant for extraction; translated where it is shown (``tr``)."""
    return msgid


def Text(msgid: str, /, **params: object) -> str:
    """A translatable English sentence: a :class:`Message`, typed as the ``str`` it is."""
    return Message(msgid, **params)


def Plural(count: int, one: str, many: str, /, **params: object) -> str:
    """``Text(one)`` when ``count`` is 1, else ``Text(many)``: "1 node", "2 nodes" (never "node(s)").

    Both ids are marked with ``N_`` at the call so the catalog holds them: ``Plural(n, N_("{n} node"),
    N_("{n} nodes"), n=n)``; Chinese translates both the same way.
    """
    return Message(one if count == 1 else many, **params)


class Message(str):
    """An English sentence built from ``msgid.format(**params)`` that remembers both."""

    msgid: str
    params: Mapping[str, object]

    def __new__(cls, msgid: str, /, **params: object) -> Message:
        self = super().__new__(cls, msgid.format(**params) if params else msgid)
        self.msgid = msgid
        self.params = MappingProxyType(params)
        return self

    def render(self, gettext: Gettext) -> str:
        params = {name: translate(value, gettext) for name, value in self.params.items()}
        template = gettext(self.msgid) or self.msgid
        try:
            return template.format(**params) if params else template
        except (KeyError, IndexError, ValueError):  # a broken translation never breaks the page
            return str(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (self.msgid, dict(self.params)))

    # Sentences built piece by piece (``text += Text(…)``) stay translatable: a concatenation is a
    # TextList with an empty separator (Python tries a str subclass's __radd__ first).
    def __add__(self, other: str) -> TextList:
        return TextList("", (self, other))

    def __radd__(self, other: str) -> TextList:
        return TextList("", (other, self))


def _rebuild(msgid: str, params: dict[str, object]) -> Message:
    return Message(msgid, **params)


class TextList(str):
    """Sentences joined by ``sep``; each part (and the separator) is translated on its own."""

    sep: str
    parts: tuple[str, ...]

    def __new__(cls, sep: str, parts: Iterable[str]) -> TextList:
        items = tuple(parts)
        self = super().__new__(cls, sep.join(items))
        self.sep = sep
        self.parts = items
        return self

    def render(self, gettext: Gettext) -> str:
        sep = (gettext(self.sep) or self.sep) if self.sep.strip() else self.sep
        return sep.join(str(translate(p, gettext)) for p in self.parts)

    def __reduce__(self) -> tuple[Any, ...]:
        return (TextList, (self.sep, self.parts))

    def __add__(self, other: str) -> TextList:
        return TextList("", (self, other))

    def __radd__(self, other: str) -> TextList:
        return TextList("", (other, self))


# Separators used with TextList, marked so the catalog holds their translations.
SEMICOLON = N_("; ")
COMMA = N_(", ")
SPACE = N_(" ")


def translate(value: object, gettext: Gettext) -> object:
    """A Text/TextList through ``gettext``; other values unchanged (numbers keep their format spec)."""
    if isinstance(value, Message | TextList):
        return value.render(gettext)
    return value


def _keep_str(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError("expected a string")
    return value


# A ``str`` field that keeps a Text as it is (pydantic would copy it into a plain str).
Msg = Annotated[str, PlainValidator(_keep_str, json_schema_input_type=str)]
