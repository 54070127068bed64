"""The frame every server-drawn chart shares: an accessible ``<svg>`` around the chart's own elements.

Each chart is ``role="img"`` with a ``<title>`` and a ``<desc>`` that ``aria-labelledby`` names (ids unique
on the page: ``<label_id>-title``, ``<label_id>-desc``), and the page puts a table next to it as the text
alternative. Geometry stays with each chart (app.web.planner.svg, explore.svg, fleet.svg, the Speed and
fleet cost charts); colours come from CSS classes or the chart's own constants.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from markupsafe import Markup, escape

from app.web.i18n import tr

SVG_NAMESPACE = "http://www.w3.org/2000/svg"


def escaped(value: object) -> Markup:
    """Escaped text in the request's language (a core Text is translated first; Markup stays as it is)."""
    return value if isinstance(value, Markup) else escape(tr(value))


def coordinate(value: float) -> str:
    """A viewBox coordinate to a tenth of a unit: ``12.345`` -> ``"12.3"``."""
    return f"{value:.1f}"


@dataclass(frozen=True)
class Frame:
    """A chart's fixed frame: its CSS class, its viewBox size, the id its title and desc are named by, and
    the margins around its plot area."""

    css_class: str
    width: int
    height: int
    label_id: str
    preserve_aspect_ratio: str = ""
    # the plot area's margins inside the viewBox (axis labels and titles stand in them)
    left: int = 0
    right: int = 0
    top: int = 0
    bottom: int = 0

    @property
    def plot_width(self) -> int:
        return self.width - self.left - self.right

    @property
    def plot_height(self) -> int:
        return self.height - self.top - self.bottom


def chart(
    frame: Frame, body: Iterable[str], *, title: object, desc: object, element_id: str | None = None
) -> Markup:
    """``body`` (the chart's elements, already escaped) in its accessible frame; ``element_id`` (a chart
    that stands on a page more than once) is its id and names its title and desc.

    >>> str(chart(Frame("c", 10, 5, "c"), ["<rect/>"], title="T", desc="D"))[:53]
    '<svg class="c" viewBox="0 0 10 5" role="img" aria-lab'
    """
    element = f' id="{escaped(element_id)}"' if element_id is not None else ""
    aspect = f' preserveAspectRatio="{frame.preserve_aspect_ratio}"' if frame.preserve_aspect_ratio else ""
    ids = escaped(element_id or frame.label_id)
    head = (
        f'<svg class="{frame.css_class}"{element} viewBox="0 0 {frame.width} {frame.height}" role="img" '
        f'aria-labelledby="{ids}-title {ids}-desc"{aspect} xmlns="{SVG_NAMESPACE}">'
        f'<title id="{ids}-title">{escaped(title)}</title><desc id="{ids}-desc">{escaped(desc)}</desc>'
    )
    return Markup("".join((head, *body, "</svg>")))
