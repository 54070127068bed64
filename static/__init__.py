"""Package data of kvplan: the wheel installs this folder as app.static (pyproject.toml, app/resources.py)."""
