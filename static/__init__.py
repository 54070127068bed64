"""Package data of kv-planner: the wheel installs this folder as app.static (pyproject.toml, app/resources.py)."""
