"""Jinja2 set-up: one environment, i18n via ``_()``, root_path-aware URLs, and block rendering.

A page and its HTMX fragment come from the same template: the fragment is one named block
rendered with the page's context (jinja2's ``Template.blocks`` + ``new_context``), so there is
no second template to drift out of step.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

import jinja2
from jinja2.ext import Extension
from jinja2.lexer import (
    TOKEN_DOT,
    TOKEN_LPAREN,
    TOKEN_NAME,
    TOKEN_PIPE,
    TOKEN_RPAREN,
    TOKEN_STRING,
    Token,
    TokenStream,
)
from starlette.requests import Request
from starlette.responses import HTMLResponse

from app.core.text import Message, TextList
from app.resources import Data, directory
from app.web import i18n
from app.web.format import gib, integer, percent
from app.web.measured_runs import BENCH_FIELDS

TEMPLATES_DIR = directory(Data.TEMPLATES)
STATIC_DIR = directory(Data.STATIC)
HTMX_ASSET = "vendor/htmx-2.0.11.min.js"  # see static/vendor/README.md


def _finalize(value: Any) -> Any:
    return i18n.tr(value) if isinstance(value, Message | TextList) else value


class ConstantMessages(Extension):
    """Translates ``_("literal")`` when a template is compiled, for one language.

    A call with a single string literal and no parameters becomes ``"translated"|safe``: the same
    markup-safe string the runtime ``_()`` returns (jinja's newstyle gettext applies ``% {}``, so
    ``%%`` becomes ``%`` here too), which jinja then folds into the template's constant output.
    ``_()`` with parameters stays a runtime call. Set ``environment.constant_messages_lang`` to use it.
    """

    def filter_stream(self, stream: TokenStream) -> Iterator[Token]:
        lang: str = self.environment.constant_messages_lang  # type: ignore[attr-defined]
        window: list[Token] = []
        previous: Token | None = None
        for token in stream:
            window.append(token)
            if not self._could_be_call(window, previous):
                head = window.pop(0)
                yield head
                previous = head
                while window and not self._could_be_call(window, previous):
                    head = window.pop(0)
                    yield head
                    previous = head
                continue
            if len(window) == 4:  # _ ( "literal" )
                literal = window[2]
                translated = i18n.translations(lang).gettext(literal.value) if literal.value else ""
                yield Token(literal.lineno, TOKEN_STRING, str(translated) % {})
                yield Token(literal.lineno, TOKEN_PIPE, "|")
                yield Token(literal.lineno, TOKEN_NAME, "safe")
                previous = None
                window.clear()
        yield from window

    @staticmethod
    def _could_be_call(window: list[Token], previous: Token | None) -> bool:
        """Is ``window`` a prefix of ``_ ( string )`` (and ``_`` not an attribute, as in ``x._``)?"""
        expected = (TOKEN_NAME, TOKEN_LPAREN, TOKEN_STRING, TOKEN_RPAREN)
        if previous is not None and previous.type == TOKEN_DOT:
            return False
        if window[0].type != TOKEN_NAME or window[0].value != "_":
            return False
        return all(token.type == kind for token, kind in zip(window, expected, strict=False))


def make_environment(lang: str | None = None) -> jinja2.Environment:
    """``lang``: translate literal ``_("…")`` at compile time for that language (one environment
    per language); without it every ``_()`` is looked up when the template runs."""
    extensions: list[str | type[Extension]] = ["jinja2.ext.i18n"]
    if lang is not None:
        extensions.append(ConstantMessages)
    env = jinja2.Environment(
        # a core sentence (Text) printed in a template is shown in the request's language
        finalize=_finalize,
        loader=jinja2.FileSystemLoader(TEMPLATES_DIR),
        autoescape=jinja2.select_autoescape(default=True, default_for_string=True),
        extensions=extensions,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,
    )
    # The catalog is chosen per request (app.web.i18n reads a context variable set by its middleware).
    env.install_gettext_callables(i18n.gettext, i18n.ngettext, newstyle=True)  # type: ignore[attr-defined]
    env.filters["gib"] = gib
    env.filters["integer"] = integer
    env.filters["percent"] = percent
    env.globals["htmx_asset"] = HTMX_ASSET
    env.globals["bench_fields"] = BENCH_FIELDS  # forms.html bench_open: the one list of benchmark arguments
    env.constant_messages_lang = lang  # type: ignore[attr-defined]
    return env


def wants_fragment(request: Request) -> bool:
    """htmx asks for the block, except when restoring history (then it needs the whole page)."""
    return (
        request.headers.get("HX-Request") == "true"
        and request.headers.get("HX-History-Restore-Request") != "true"
    )


MAX_URL_PATHS_PER_APP = 4096  # routes x path parameters x root paths: far fewer in practice


def url_path(request: Request, name: str, /, **path_params: Any) -> str:
    """``request.url_for(name).path``, computed once per app, root_path, route and parameters.

    Routes and the root path do not change while the app runs, so a page that links to the same
    routes on every slider move need not walk the router each time.
    """
    state = request.app.state  # the cache lives and dies with its app
    paths: dict[tuple[str, str, tuple[tuple[str, Any], ...]], str] | None = getattr(state, "url_paths", None)
    if paths is None:
        paths = state.url_paths = {}
    key = (request.scope.get("root_path", ""), name, tuple(path_params.items()))
    path = paths.get(key)
    if path is None:
        path = request.url_for(name, **path_params).path
        if len(paths) < MAX_URL_PATHS_PER_APP:
            paths[key] = path
    return path


class Renderer:
    """Renders whole pages or single blocks; ``url()`` in templates respects the app's root_path."""

    def __init__(self) -> None:
        self.envs = {lang: make_environment(lang) for lang in i18n.LANGUAGES}

    @property
    def env(self) -> jinja2.Environment:
        """The environment of the request's language (its constant messages are already translated)."""
        return self.envs[i18n.current()]

    def _context(self, request: Request, context: dict[str, Any], *, page: bool) -> dict[str, Any]:
        def url(name: str, /, **path_params: Any) -> str:
            return url_path(request, name, **path_params)

        lang = i18n.current()
        shared = {
            "request": request,
            "url": url,
            "lang": i18n.HTML_LANG[lang],
            "lang_code": lang,
            "fragment": not page,  # a block htmx swaps in (out-of-band parts go with it)
        }
        if page:  # the header's language switch is part of the page, never of a block
            shared["lang_links"] = i18n.switch_links(request.url.path, request.query_params.multi_items())
        return {**shared, **context}

    def page(self, name: str, request: Request, context: dict[str, Any]) -> str:
        return self.env.get_template(name).render(self._context(request, context, page=True))

    def block(self, name: str, block: str, request: Request, context: dict[str, Any]) -> str:
        template = self.env.get_template(name)
        ctx = template.new_context(self._context(request, context, page=False))
        return "".join(template.blocks[block](ctx))


def render(
    request: Request,
    template: str,
    block: str | None,
    context: dict[str, Any],
    *,
    status: int = 200,
    replace_url: str | None = None,
) -> HTMLResponse:
    """The one page-or-fragment response of every route: htmx gets ``block`` of ``template`` (and,
    with ``replace_url``, the address bar set to the permalink), anything else the whole page — a
    history restore too (:func:`wants_fragment`). ``Vary: HX-Request`` so a cache keeps them apart;
    ``block`` None: the route has no fragment."""
    renderer: Renderer = request.app.state.renderer
    headers = {"Vary": "HX-Request"}
    if block is not None and wants_fragment(request):
        body = renderer.block(template, block, request, context)
        if replace_url is not None:
            headers["HX-Replace-Url"] = replace_url
    else:
        body = renderer.page(template, request, context)
    return HTMLResponse(body, status_code=status, headers=headers)


class PageView(Protocol):
    """A page's typed view: the permalink of its inputs, and the problem that stopped it (None: it answered)."""

    @property
    def permalink(self) -> str: ...
    @property
    def error(self) -> object: ...


def render_view(
    request: Request, template: str, view: PageView, *, status: int | None = None, **context: Any
) -> HTMLResponse:
    """A page whose ``results`` block htmx swaps: the view (plus ``context``) in ``template``, 422 when
    the view could not answer (or ``status``), the address bar set to the view's permalink."""
    return render(
        request,
        template,
        "results",
        {"view": view, **context},
        status=status or (422 if view.error else 200),
        replace_url=view.permalink,
    )
