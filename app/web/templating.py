"""Jinja2 set-up: one environment, i18n via ``_()``, root_path-aware URLs, and block rendering.

A page and its HTMX fragment come from the same template: the fragment is one named block
rendered with the page's context (jinja2's ``Template.blocks`` + ``new_context``), so there is
no second template to drift out of step.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2
from starlette.requests import Request

from app.core.text import Message, TextList
from app.web import i18n
from app.web.format import gib, integer, percent

REPO_ROOT = Path(__file__).resolve().parents[2]
TEMPLATES_DIR = REPO_ROOT / "templates"
STATIC_DIR = REPO_ROOT / "static"
HTMX_ASSET = "vendor/htmx-2.0.11.min.js"  # see static/vendor/README.md


def _finalize(value: Any) -> Any:
    return i18n.tr(value) if isinstance(value, Message | TextList) else value


def make_environment() -> jinja2.Environment:
    env = jinja2.Environment(
        # a core sentence (Text) printed in a template is shown in the request's language
        finalize=_finalize,
        loader=jinja2.FileSystemLoader(TEMPLATES_DIR),
        autoescape=jinja2.select_autoescape(default=True, default_for_string=True),
        extensions=["jinja2.ext.i18n"],
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
    return env


class Renderer:
    """Renders whole pages or single blocks; ``url()`` in templates respects the app's root_path."""

    def __init__(self) -> None:
        self.env = make_environment()

    def _context(self, request: Request, context: dict[str, Any]) -> dict[str, Any]:
        def url(name: str, /, **path_params: Any) -> str:
            return request.url_for(name, **path_params).path

        lang = i18n.current()
        return {
            "request": request,
            "url": url,
            "lang": i18n.HTML_LANG[lang],
            "lang_code": lang,
            "lang_links": i18n.switch_links(request.url.path, request.query_params.multi_items()),
            **context,
        }

    def page(self, name: str, request: Request, context: dict[str, Any]) -> str:
        return self.env.get_template(name).render(self._context(request, context))

    def block(self, name: str, block: str, request: Request, context: dict[str, Any]) -> str:
        template = self.env.get_template(name)
        ctx = template.new_context(self._context(request, context))
        return "".join(template.blocks[block](ctx))
