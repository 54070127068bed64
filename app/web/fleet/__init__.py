"""Fleet sizing (issue 15): `GET/POST /fleet` (page or htmx fragment) and `POST /api/fleet`."""

from app.web.fleet.routes import api_router, router

__all__ = ["api_router", "router"]
