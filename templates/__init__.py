"""Package data of kv-planner: the wheel installs this folder as app.templates (pyproject.toml, app/resources.py)."""
