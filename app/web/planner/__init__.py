"""The planner: will this model start under vLLM, where every byte goes, the command and permalink.

params (the query model every feature extends, the permalink codec), service (from params to the core's
inputs, and the one estimate call the web features share), views (the typed view model), routes (the
page, its fragment and lazy sections), api (the JSON twin: /api/estimate, /api/models, /api/devices).
"""
