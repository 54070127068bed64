"""Package data of kvplan: the wheel installs this folder as app.docs (pyproject.toml, app/resources.py)."""
