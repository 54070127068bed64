"""Package data of kvplan: the wheel installs this folder as app.device_specs (pyproject.toml, app/resources.py)."""
