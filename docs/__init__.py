"""Package data of kv-planner: the wheel installs this folder as app.docs (pyproject.toml, app/resources.py)."""
