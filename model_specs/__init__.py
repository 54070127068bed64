"""Package data of kvplan: the wheel installs this folder as app.model_specs (pyproject.toml, app/resources.py)."""
