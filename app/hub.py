"""Opt-in model hub: a model id the catalog lacks, read from a Hugging Face hub (or a mirror).

Off unless ``KVPLAN_ALLOW_HUB=1``: then nothing but the catalog is consulted and an unknown id stays
the catalog's clear 4xx. With it on, ``org/name`` (or ``org/name@revision``, default ``main``) is read
from ``HF_ENDPOINT`` (default https://huggingface.co) the way ``huggingface_hub`` addresses files:

    {endpoint}/{org}/{name}/resolve/{revision}/config.json
    {endpoint}/{org}/{name}/resolve/{revision}/model.safetensors.index.json   (when present)

The index's ``metadata.total_size`` gives the exact weight bytes; a model without one (a single
``model.safetensors``, answered 404) gets its weights from the parameter count, as a pasted config.
``HF_TOKEN`` is sent as a bearer token for gated or private models, to that endpoint only.

Limits: a short timeout per request, a size cap per file, redirects only within the endpoint's own
scheme and host (a renamed repository; a redirect anywhere else is refused, so the token and the
request never leave it), an on-disk cache (``KVPLAN_HUB_CACHE``, default ``~/.cache/kvplan/hub``)
and one in memory, so a slider move never waits for the network. Every failure is a
:class:`PlannerError` on the ``model`` field: a 4xx with a sentence saying what went wrong.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.catalog import CONFIG_FILE_NAME, SAFETENSORS_INDEX_FILE_NAME, find_model
from app.core.errors import PlannerError, UnknownModelError
from app.core.hf_config import model_spec_from_hf_config
from app.core.specs import ModelSpec
from app.core.text import Text

ENV_ALLOW = "KVPLAN_ALLOW_HUB"
ENV_ENDPOINT = "HF_ENDPOINT"  # the variable huggingface_hub reads, so mirrors are set the same way
ENV_TOKEN = "HF_TOKEN"
ENV_CACHE = "KVPLAN_HUB_CACHE"
DEFAULT_ENDPOINT = "https://huggingface.co"
DEFAULT_REVISION = "main"
# One socket operation (connect, or a read) may wait this long; a whole file at most TOTAL.
TIMEOUT_SECONDS = 5.0
TOTAL_SECONDS = 10.0
# The largest real config.json files are ~10 KiB (multimodal ones with nested vision configs ~20 KiB);
# a safetensors index lists every tensor: DeepSeek-V3's (91,991 tensors) is ~8.9 MiB.
CONFIG_MAX_BYTES = 1 << 20
INDEX_MAX_BYTES = 32 << 20
READ_CHUNK_BYTES = 64 << 10
MAX_REDIRECTS = 3
# A cached branch ("main") is re-read after a day; a commit hash never changes.
CACHE_TTL_SECONDS = 24 * 3600
# A failed id is not asked for again for a minute (each slider move re-resolves the model).
FAILURE_TTL_SECONDS = 60.0
CACHE_FORMAT = 1

# HF repository ids: "org/name", letters, digits, "-", "_", "." (no "..", no leading dot).
_REPO_PART = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,95})"
_REPO_RE = re.compile(rf"^({_REPO_PART})/({_REPO_PART})$")
_REVISION_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,99}$")
_COMMIT_RE = re.compile(r"^[0-9a-f]{40}$")


class HubError(PlannerError):
    """The hub could not give a usable model for this id; the message says why."""

    def __init__(self, message: str) -> None:
        super().__init__("model", message)


def enabled() -> bool:
    return os.environ.get(ENV_ALLOW, "").strip().lower() in ("1", "true", "yes", "on")


def endpoint() -> str:
    value = os.environ.get(ENV_ENDPOINT, "").strip() or DEFAULT_ENDPOINT
    parts = urllib.parse.urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        raise HubError(Text("HF_ENDPOINT must be an http(s) URL, got {value!r}", value=value))
    return value.rstrip("/")


@dataclass(frozen=True)
class HubRef:
    repo: str
    revision: str

    @property
    def label(self) -> str:
        return self.repo if self.revision == DEFAULT_REVISION else f"{self.repo}@{self.revision}"


def parse_ref(model_id: str) -> HubRef | None:
    """``org/name[@revision]`` when it is a well-formed hub id, else None."""
    repo, _, revision = model_id.strip().partition("@")
    revision = revision or DEFAULT_REVISION
    if not _REPO_RE.match(repo) or ".." in repo or not _REVISION_RE.match(revision) or ".." in revision:
        return None
    return HubRef(repo=repo, revision=revision)


def file_url(base: str, ref: HubRef, filename: str) -> str:
    revision = urllib.parse.quote(ref.revision, safe="")  # "refs/pr/1" -> "refs%2Fpr%2F1", as the hub wants
    return f"{base}/{ref.repo}/resolve/{revision}/{filename}"


# ----------------------------------------------------------------------------------------------
# HTTP: one endpoint, no redirects elsewhere, capped sizes
# ----------------------------------------------------------------------------------------------


class _SameOriginRedirects(urllib.request.HTTPRedirectHandler):
    max_redirections = MAX_REDIRECTS

    def __init__(self, origin: tuple[str, str]) -> None:
        self.origin = origin

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: Any,
        code: int,
        msg: str,
        headers: Any,
        newurl: str,
    ) -> urllib.request.Request | None:
        target = urllib.parse.urlsplit(newurl)
        if (target.scheme, target.netloc) != self.origin:
            origin = "://".join(self.origin)
            raise HubError(
                Text(
                    "the hub redirected {url} to another host ({host}); only {endpoint} is contacted",
                    url=req.full_url,
                    host=target.netloc or "?",
                    endpoint=origin,
                )
            )
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _get(url: str, *, max_bytes: int, token: str | None) -> bytes | None:
    """The body of ``url``; None for a 404 (file absent). Anything else unusable raises HubError."""
    parts = urllib.parse.urlsplit(url)
    opener = urllib.request.build_opener(_SameOriginRedirects((parts.scheme, parts.netloc)))
    request = urllib.request.Request(url, headers={"User-Agent": "kvplan", "Accept": "application/json"})
    if token:  # redirects stay on this origin (_SameOriginRedirects), so the token may follow them
        request.add_header("Authorization", f"Bearer {token}")
    started = time.monotonic()
    try:
        with opener.open(request, timeout=TIMEOUT_SECONDS) as response:
            declared = response.headers.get("Content-Length")
            if declared is not None and declared.isdigit() and int(declared) > max_bytes:
                raise _too_large(url, max_bytes)
            body = bytearray()
            while chunk := response.read(READ_CHUNK_BYTES):
                body += chunk
                if len(body) > max_bytes:
                    raise _too_large(url, max_bytes)
                if time.monotonic() - started > TOTAL_SECONDS:
                    raise _timed_out(url)
            return bytes(body)
    except urllib.error.HTTPError as exc:
        exc.close()
        if exc.code == 404:
            return None
        if exc.code in (401, 403):
            raise HubError(
                Text(
                    "{url} answered {status}: a gated or private model needs HF_TOKEN (and its licence accepted on the hub)",
                    url=url,
                    status=exc.code,
                )
            ) from None
        raise HubError(Text("{url} answered {status}", url=url, status=exc.code)) from None
    except TimeoutError:
        raise _timed_out(url) from None
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, TimeoutError):
            raise _timed_out(url) from None
        raise HubError(Text("cannot reach {url} ({reason})", url=url, reason=str(exc.reason))) from None
    except OSError as exc:
        raise HubError(Text("cannot reach {url} ({reason})", url=url, reason=str(exc))) from None


def _too_large(url: str, max_bytes: int) -> HubError:
    limit = format(max_bytes, ",")
    return HubError(Text("{url} is larger than {limit} bytes; not read", url=url, limit=limit))


def _timed_out(url: str) -> HubError:
    seconds = format(TIMEOUT_SECONDS, "g")
    return HubError(Text("{url} did not answer within {seconds} s", url=url, seconds=seconds))


def _json_object(url: str, body: bytes) -> dict[str, Any]:
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise HubError(Text("{url} is not valid JSON", url=url)) from None
    if not isinstance(data, dict):
        raise HubError(Text("{url}: top level must be a JSON object", url=url))
    return data


# ----------------------------------------------------------------------------------------------
# What is kept: the config and the index's metadata (the weight map is not needed)
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fetched:
    config: dict[str, Any]
    index_metadata: dict[str, Any] | None  # model.safetensors.index.json "metadata", None if absent
    source: str  # the config.json URL


def fetch(ref: HubRef, *, base: str) -> Fetched:
    token = os.environ.get(ENV_TOKEN, "").strip() or None
    config_url = file_url(base, ref, CONFIG_FILE_NAME)
    body = _get(config_url, max_bytes=CONFIG_MAX_BYTES, token=token)
    if body is None:
        raise HubError(
            Text(
                "{model} is not in the catalog and {url} was not found (check the id and revision)",
                model=ref.label,
                url=config_url,
            )
        )
    config = _json_object(config_url, body)
    index_url = file_url(base, ref, SAFETENSORS_INDEX_FILE_NAME)
    index_body = _get(index_url, max_bytes=INDEX_MAX_BYTES, token=token)
    metadata = None
    if index_body is not None:
        index = _json_object(index_url, index_body)
        raw = index.get("metadata")
        if not isinstance(raw, dict) or raw.get("total_size") is None:
            raise HubError(Text("{url} has no metadata.total_size", url=index_url))
        metadata = {"total_size": raw["total_size"]}
    return Fetched(config=config, index_metadata=metadata, source=config_url)


def cache_dir() -> Path:
    configured = os.environ.get(ENV_CACHE, "").strip()
    if configured:
        return Path(configured)
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(xdg) if xdg else Path.home() / ".cache") / "kvplan" / "hub"


def _cache_file(base: str, ref: HubRef) -> Path:
    key = hashlib.sha256(f"{base}\n{ref.repo}\n{ref.revision}".encode()).hexdigest()[:32]
    return cache_dir() / f"{key}.json"


def _read_cache(path: Path, ref: HubRef) -> Fetched | None:
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or entry.get("format") != CACHE_FORMAT:
        return None
    fresh = (
        _COMMIT_RE.match(ref.revision) or time.time() - float(entry.get("fetched_at", 0)) < CACHE_TTL_SECONDS
    )
    config, metadata, source = entry.get("config"), entry.get("index_metadata"), entry.get("source")
    if not fresh or not isinstance(config, dict) or not isinstance(source, str):
        return None
    if metadata is not None and not isinstance(metadata, dict):
        return None
    return Fetched(config=config, index_metadata=metadata, source=source)


def _write_cache(path: Path, fetched: Fetched) -> None:
    entry = {
        "format": CACHE_FORMAT,
        "fetched_at": time.time(),
        "source": fetched.source,
        "config": fetched.config,
        "index_metadata": fetched.index_metadata,
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, suffix=".tmp", delete=False) as fh:
            json.dump(entry, fh)
        os.replace(fh.name, path)
    except OSError:
        pass  # a read-only cache only costs a re-fetch


_lock = threading.Lock()
_specs: dict[tuple[str, HubRef], ModelSpec] = {}
_failures: dict[tuple[str, HubRef], tuple[float, HubError]] = {}


def hub_model(ref: HubRef) -> ModelSpec:
    """The ModelSpec of ``ref`` from the hub (memory, then disk cache, then the network)."""
    base = endpoint()
    key = (base, ref)
    with _lock:
        if key in _specs:
            return _specs[key]
        failed = _failures.get(key)
        if failed is not None and time.monotonic() - failed[0] < FAILURE_TTL_SECONDS:
            raise failed[1]
    path = _cache_file(base, ref)
    fetched = _read_cache(path, ref)
    try:
        if fetched is None:
            fetched = fetch(ref, base=base)
            _write_cache(path, fetched)
        index = {"metadata": fetched.index_metadata} if fetched.index_metadata is not None else None
        spec = model_spec_from_hf_config(
            fetched.config, name=ref.label, safetensors_index=index, source=fetched.source
        )
    except HubError as exc:
        with _lock:
            _failures[key] = (time.monotonic(), exc)
        raise
    except PlannerError as exc:
        error = HubError(
            Text(
                "the config.json of {model} cannot be read: {field}: {message}",
                model=ref.label,
                field=exc.field,
                message=exc.message,
            )
        )
        with _lock:
            _failures[key] = (time.monotonic(), error)
        raise error from exc
    with _lock:
        _specs[key] = spec
    return spec


def find_model_or_fetch(model_id: str) -> tuple[ModelSpec, bool]:
    """The catalog's spec; with the opt-in, a hub spec for an id the catalog lacks.

    Returns the spec and whether it came from the hub. Without the opt-in (or for an id that is not a
    hub id) the catalog's UnknownModelError propagates unchanged.
    """
    try:
        return find_model(model_id), False
    except UnknownModelError:
        if not enabled():
            raise
        ref = parse_ref(model_id)
        if ref is None:
            raise
        return hub_model(ref), True
