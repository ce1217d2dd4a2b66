"""Templates of the inspector (Jinja2, autoescaped: stored text is always shown as text) and the inline SVG chart.

Pages are rendered on the server; htmx (``static/htmx.min.js``, 0BSD, vendored unchanged) swaps the fragment a
form's POST returns, sending the CSRF header on every request (``hx-headers`` on ``<body>``). Nothing is built
at install time and no script of ours runs in the page.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse

from pi_memory.curated.messages import for_person
from pi_memory.index.results import highlight_parts
from pi_memory.integrations.inspector.server import CSRF_HEADER, Tokens

TEMPLATES = Path(__file__).parent / "templates"
NAV = [("stores", "Stores"), ("semantic", "Semantic memories"), ("sessions", "Sessions"), ("recall", "Recall preview"),
       ("learning", "Learning log"), ("skills", "Skills"), ("health", "Health")]


def percent(chars: int, limit: int) -> int:
    """Share of a limit for a usage bar, 0..100 (full at or past the limit)."""
    return 100 if limit <= 0 else min(100, round(100 * chars / limit))


MIN_BAR = 2  # px: the smallest bar of a day that spent tokens


def day_chart(days: list[dict], budget: int, width: int = 640, height: int = 180) -> dict[str, Any]:
    """Geometry of the per-day token chart: one bar per day (``tokens_per_day``), the daily budget as a line.
    The scale's top is the larger of the budget and the busiest day, so both always fit; a day that spent
    tokens gets at least :data:`MIN_BAR` pixels and its total written above the bar (827 tokens beside a
    300,000 budget would otherwise be no bar at all)."""
    top = max([budget, *[d["tokens"] for d in days], 1])
    pad_left, pad_bottom, pad_top = 56, 28, 10
    inner_w, inner_h = width - pad_left - 8, height - pad_bottom - pad_top
    step = inner_w / max(1, len(days))
    bars = []
    for i, d in enumerate(days):
        h = inner_h * d["tokens"] / top
        if d["tokens"] and h < MIN_BAR:  # a day with tokens stays visible beside a far larger budget
            h = MIN_BAR
        bars.append({"x": round(pad_left + i * step + step * 0.15, 1), "y": round(pad_top + inner_h - h, 1),
                     "w": round(step * 0.7, 1), "h": round(h, 1), "day": d["day"], "tokens": d["tokens"],
                     "jobs": d["jobs"], "over": d["tokens"] > budget, "label": d["day"][5:],
                     "lx": round(pad_left + i * step + step / 2, 1), "vy": round(pad_top + inner_h - h - 3, 1),
                     "value": f"{d['tokens']:,}" if d["tokens"] else ""})
    budget_y = round(pad_top + inner_h - inner_h * budget / top, 1)
    return {"width": width, "height": height, "bars": bars, "budget": budget, "budget_y": budget_y,
            "top": top, "left": pad_left, "base_y": pad_top + inner_h, "right": width - 8,
            "label_y": height - 8}


class Renderer:
    """Renders pages and fragments with the memory's data root, the nav and the CSRF token in every page."""

    def __init__(self, memory, tokens: Tokens):
        self.memory = memory
        self.tokens = tokens
        self.env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(default=True),
                               trim_blocks=True, lstrip_blocks=True)
        self.env.globals.update(nav=NAV, percent=percent, highlight_parts=highlight_parts, for_person=for_person,
                                csrf_header=CSRF_HEADER, csrf_token=tokens.csrf)

    def page(self, request: Request, template: str, active: str, **context: Any) -> HTMLResponse:
        context.update(active=active, data_dir=str(self.memory.settings.data_dir), path=request.url.path)
        return HTMLResponse(self.env.get_template(template).render(**context))

    def fragment(self, template: str, **context: Any) -> HTMLResponse:
        return HTMLResponse(self.env.get_template(template).render(**context))
