"""Package data of kvplan: the wheel installs this folder as app.templates (pyproject.toml, app/resources.py)."""
