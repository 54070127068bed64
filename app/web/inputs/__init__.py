"""The web kernel: what every feature reads its inputs with and shares.

- ``params``: the planner's parameter model (PlannerParams, StrictPlannerParams for the API), its
  field types and the mapping to the core's ServeConfig;
- ``lenient``: the one lenient parser (drop each bad field, report it) for any feature's model;
- ``resolve``: parameters to the core's specs (model, device, flags) and the one estimate call;
- ``options``: the catalog's models, devices and releases as <select> options;
- ``links``: permalinks (query strings that reproduce the inputs) and the compare link;
- ``problems``: the one problem type of banners, inline errors and API details.

Features (app/web/<feature>/) import from here and never from each other.
"""
