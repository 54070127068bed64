"""The planner: will this model start under vLLM, where every byte goes, the command and permalink.

Its inputs are the kernel's (app.web.inputs: PlannerParams, the lenient parser, resolve and the one
estimate call, permalinks). service (the estimate with its capacity chart), views (the typed view
model), svg (the charts), routes (the page, its fragment and lazy sections), api (the JSON twin:
/api/estimate, /api/models, /api/devices).
"""
