"""Run the web app with uvicorn (``kvplan serve`` calls this)."""

from __future__ import annotations

import os

import uvicorn
from fastapi import FastAPI

from app.web.app import create_app

ROOT_PATH_ENV = "KVPLAN_ROOT_PATH"  # carries the prefix to worker processes


def app_from_env() -> FastAPI:
    """The factory uvicorn's worker processes call (they cannot receive arguments)."""
    return create_app(root_path=os.environ.get(ROOT_PATH_ENV, ""))


def run(*, host: str, port: int, root_path: str, workers: int) -> None:
    """Serve on ``host:port``; ``root_path`` when mounted under a prefix such as ``/tools/kvplan``."""
    if workers > 1:
        os.environ[ROOT_PATH_ENV] = root_path
        uvicorn.run(
            "app.web.server:app_from_env",
            factory=True,
            host=host,
            port=port,
            workers=workers,
            access_log=True,
        )
    else:
        uvicorn.run(create_app(root_path=root_path), host=host, port=port, access_log=True)
