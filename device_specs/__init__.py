"""Package data of kv-planner: the wheel installs this folder as app.device_specs (pyproject.toml, app/resources.py)."""
