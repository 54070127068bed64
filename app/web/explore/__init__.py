"""The explore page: block sizes, prefix caching and workload shapes (the seed's second half).

``GET /explore`` serves the page, or its results block for htmx; ``GET /api/blocks`` and
``POST /api/workload`` are its JSON twins. The planner's parameters (``PlannerParams``) ride in
the same query string, so a planner permalink opens here unchanged and "Back to planner" keeps
them. All arithmetic is the core's (``app.core.blocks``, ``app.core.workload``, the estimator);
this package only chooses inputs (params), runs the core (service), formats (views) and serves (routes).
"""

from app.core.workload import WORKLOAD_PRESETS
from app.web.explore.params import encode_classes, parse_classes, parse_length
from app.web.explore.routes import api_router, router

__all__ = ["WORKLOAD_PRESETS", "api_router", "encode_classes", "parse_classes", "parse_length", "router"]
