"""Domain errors: each names the input field it is about, so the edges can say which one is wrong.

The web layer maps every PlannerError to a 4xx (inline message for HTMX, JSON for the API);
the CLI prints ``error: <field>: <message>`` and exits non-zero.
"""

from __future__ import annotations

from app.core.text import Text


class PlannerError(Exception):
    """Bad or impossible input. ``field`` is the user-facing input name (snake_case).

    ``message`` is English; an :class:`app.core.text.Text` also carries its message id for the web layer.
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class UnknownModelError(PlannerError):
    def __init__(self, model_id: str) -> None:
        super().__init__(
            "model",
            Text(
                "unknown model {model_id!r}; see `kv-planner models`, or give its config.json (a path to it on the command line, config_json in the API)",
                model_id=model_id,
            ),
        )
        self.model_id = model_id


class UnknownDeviceError(PlannerError):
    def __init__(self, device_id: str) -> None:
        super().__init__(
            "device", Text("unknown device {device_id!r}; see `kv-planner devices`", device_id=device_id)
        )
        self.device_id = device_id


class ConfigError(PlannerError):
    """A config.json / model card that cannot be turned into a ModelSpec."""


class InvalidServeConfigError(PlannerError):
    """A combination vLLM itself would refuse (TP not dividing heads, unsupported KV dtype...)."""
