"""Package data of kv-planner: the wheel installs this folder as app.model_specs (pyproject.toml, app/resources.py)."""
