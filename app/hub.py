"""Opt-in model hub: a model id the catalog lacks, read from a Hugging Face hub (or a mirror).

Off unless ``KVPLAN_ALLOW_HUB=1``: then nothing but the catalog is consulted and an unknown id stays
the catalog's clear 4xx. With it on, ``org/name`` (or ``org/name@revision``, default ``main``) is read
from ``HF_ENDPOINT`` (default https://huggingface.co) the way ``huggingface_hub`` addresses files:

    {endpoint}/{org}/{name}/resolve/{revision}/config.json
    {endpoint}/{org}/{name}/resolve/{revision}/model.safetensors.index.json   (when present)

The index's ``metadata.total_size`` gives the exact weight bytes; a model without one (a single
``model.safetensors``, answered 404) gets its weights from the parameter count, as a pasted config.
``HF_TOKEN`` is sent as a bearer token for gated or private models, to that endpoint only.

A client that cannot be turned against the server (docs/security.md, "The hub"):

- one fetch per (endpoint, id, revision) at a time, however many requests ask (single flight);
- fetches run on their own pool of ``FETCH_WORKERS`` threads, never the request pool; with all of
  them busy a new id is refused at once (a 4xx "busy"), so a queue never forms;
- ``TOTAL_SECONDS`` for the whole fetch (both files), enforced on the socket: a timer shuts the
  socket down at the deadline, so a hub that drips a byte every few seconds is cut off too;
- from the index only its leading ``metadata`` object is read (the first ``INDEX_SCAN_BYTES`` at
  most; the weight map, up to ~10 MB and 10⁵ keys, is never parsed);
- JSON is checked for size and nesting before ``json.loads``;
- ids and revisions are matched whole (``ok/a\\n@main`` is not an id);
- the memory caches are LRU-bounded and the disk cache is capped in bytes and files (oldest out);
- at most ``FETCH_RATE_PER_S`` network fetches a second across all clients (a burst of
  ``FETCH_BURST``); over it a 4xx says to try again;
- failure messages name the model id and the file, never the endpoint's URL.

Every failure is a :class:`HubError` on the ``model`` field: a 4xx with a sentence saying what went wrong.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import http.client
import json
import os
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app import hub_transport as transport
from app.core import regex
from app.core.catalog import (
    CONFIG_FILE_NAME,
    HF_QUANT_CONFIG_FILE_NAME,
    SAFETENSORS_INDEX_FILE_NAME,
    find_model,
)
from app.core.errors import PlannerError, UnknownModelError
from app.core.hf_config import model_spec_from_hf_config
from app.core.jsontext import MAX_JSON_DEPTH, json_depth_exceeds
from app.core.specs import ModelSpec
from app.core.text import N_, Text
from app.hub_transport import Deadline, OffOriginError

ENV_ALLOW = "KVPLAN_ALLOW_HUB"
ENV_ENDPOINT = "HF_ENDPOINT"  # the variable huggingface_hub reads, so mirrors are set the same way
ENV_TOKEN = "HF_TOKEN"
ENV_CACHE = "KVPLAN_HUB_CACHE"
DEFAULT_ENDPOINT = "https://huggingface.co"
DEFAULT_REVISION = "main"
# One socket operation (connect, or a read) may wait this long; the whole fetch (both files) at most TOTAL.
TIMEOUT_SECONDS = 5.0
TOTAL_SECONDS = 10.0
# A request waits for a fetch a little longer than the fetch may take (its socket is shut at TOTAL).
WAIT_MARGIN_SECONDS = 1.0
# Most config.json files are ~10 KiB, but ModelOpt MIXED_PRECISION checkpoints list a quant_algo per module
# in config.json or hf_quant_config.json: nvidia/MiniMax-M3-NVFP4's are 3.0 MB each (tests/data/configs/current).
CONFIG_MAX_BYTES = 8 << 20
# A safetensors index starts with its metadata ({"metadata": {"total_size": …}, "weight_map": …}, as
# huggingface_hub and transformers write it); only that object is read, from at most the first MiB.
INDEX_SCAN_BYTES = 1 << 20
METADATA_MAX_BYTES = 64 << 10
READ_CHUNK_BYTES = 64 << 10
# Fetches in flight at once, each on its own thread of the hub's pool (not the request pool).
FETCH_WORKERS = 8
# Network fetches (2 files each) across all clients: 4 a second with a burst of 16 is far above a
# team trying models by hand and far below the ~490 requests/s one client used to cause.
FETCH_RATE_PER_S = 4.0
FETCH_BURST = 16
# Memory caches: specs are ~2 KB, failures a sentence; both LRU-bounded.
SPEC_CACHE_ENTRIES = 256
FAILURE_CACHE_ENTRIES = 1024
# The on-disk cache: a cached entry is a config (≤ 1 MiB, ~10 KiB real) plus the index metadata.
DISK_CACHE_MAX_BYTES = 64 << 20
DISK_CACHE_MAX_FILES = 2048
# A cached branch ("main") is re-read after a day; a commit hash never changes.
CACHE_TTL_SECONDS = 24 * 3600
# A failed id is not asked for again for a minute (each slider move re-resolves the model).
FAILURE_TTL_SECONDS = 60.0
CACHE_FORMAT = 1

# HF repository ids: "org/name", letters, digits, "-", "_", "." (no "..", no leading dot), matched whole.
_REPO_PART = r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}"
_REPO_RE = regex.compile(rf"({_REPO_PART})/({_REPO_PART})")
_REVISION_RE = regex.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,99}")
_COMMIT_RE = regex.compile(r"[0-9a-f]{40}")


class HubError(PlannerError):
    """The hub could not give a usable model for this id; the message says why.

    ``transient``: the hub was busy or the fetch rate was reached — not remembered as a failure."""

    def __init__(self, message: str, *, transient: bool = False) -> None:
        super().__init__("model", message)
        self.transient = transient


def enabled() -> bool:
    return os.environ.get(ENV_ALLOW, "").strip().lower() in ("1", "true", "yes", "on")


def endpoint() -> str:
    value = os.environ.get(ENV_ENDPOINT, "").strip() or DEFAULT_ENDPOINT
    parts = urllib.parse.urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        raise HubError(Text("the server's HF_ENDPOINT is not an http(s) URL; ask its operator to fix it"))
    return value.rstrip("/")


@dataclass(frozen=True)
class HubRef:
    repo: str
    revision: str

    @property
    def label(self) -> str:
        return self.repo if self.revision == DEFAULT_REVISION else f"{self.repo}@{self.revision}"


def parse_ref(model_id: str) -> HubRef | None:
    """``org/name[@revision]`` when it is a well-formed hub id (matched whole), else None."""
    repo, _, revision = model_id.strip().partition("@")
    revision = revision or DEFAULT_REVISION
    if not _REPO_RE.fullmatch(repo) or ".." in repo:
        return None
    if not _REVISION_RE.fullmatch(revision) or ".." in revision:
        return None
    return HubRef(repo=repo, revision=revision)


def file_url(base: str, ref: HubRef, filename: str) -> str:
    revision = urllib.parse.quote(ref.revision, safe="")  # "refs/pr/1" -> "refs%2Fpr%2F1", as the hub wants
    return f"{base}/{ref.repo}/resolve/{revision}/{filename}"


# ----------------------------------------------------------------------------------------------
# HTTP: one endpoint, no redirects elsewhere, capped sizes, a deadline on the socket
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _File:
    """One file of one model, as messages name it: ``config.json of acme/model``."""

    ref: HubRef
    name: str
    url: str

    def error(self, msgid: str, /, **params: object) -> HubError:
        """A HubError about this file: ``msgid`` (marked with N_) names it as ``{model}`` and ``{file}``."""
        return HubError(Text(msgid, model=self.ref.label, file=self.name, **params))


def _get(
    file: _File, *, deadline: Deadline, max_bytes: int, token: str | None, enough: Any = None
) -> bytes | None:
    """The body of ``file``; None for a 404 (file absent). Anything else unusable raises HubError.

    ``enough(body) -> bool``: stop reading early once it says the bytes so far are all that is needed.
    """
    parts = urllib.parse.urlsplit(file.url)
    opener = transport.opener(deadline, (parts.scheme, parts.netloc), timeout_s=TIMEOUT_SECONDS)
    request = urllib.request.Request(
        file.url, headers={"User-Agent": "kv-planner", "Accept": "application/json"}
    )
    if token:  # redirects stay on this origin (_SameOriginRedirects), so the token may follow them
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with opener.open(request, timeout=max(0.01, min(TIMEOUT_SECONDS, deadline.remaining()))) as response:
            declared = response.headers.get("Content-Length")
            if enough is None and declared is not None and declared.isdigit() and int(declared) > max_bytes:
                raise _too_large(file, max_bytes)
            body = bytearray()
            while chunk := response.read(READ_CHUNK_BYTES):
                body += chunk
                if enough is not None and enough(bytes(body)):
                    break
                if len(body) > max_bytes:
                    raise _too_large(file, max_bytes)
            if deadline.expired:  # the socket was shut mid-body: what was read is not the file
                raise _timed_out(file, deadline.seconds)
            return bytes(body)
    except urllib.error.HTTPError as exc:
        exc.close()
        if exc.code == 404:
            return None
        raise _http_status(file, exc.code) from None
    except OffOriginError:
        raise file.error(
            N_(
                "{model}: the hub redirected {file} to another host; only the configured endpoint is contacted"
            )
        ) from None
    except (TimeoutError, urllib.error.URLError, OSError, http.client.HTTPException) as exc:
        if deadline.expired:
            raise _timed_out(file, deadline.seconds) from None
        reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        if isinstance(reason, TimeoutError):
            # a read's timeout is the smaller of TIMEOUT_SECONDS and what is left of the whole fetch
            capped = deadline.remaining() < TIMEOUT_SECONDS
            raise _timed_out(file, deadline.seconds if capped else TIMEOUT_SECONDS) from None
        why = getattr(reason, "strerror", None) or type(reason).__name__
        raise file.error(N_("{model}: the hub cannot be reached ({reason})"), reason=why) from None


def _http_status(file: _File, status: int) -> HubError:
    if status in (401, 403):
        return file.error(
            N_(
                "{model}: {file} answered {status}: a gated or private model needs HF_TOKEN (and its licence accepted on the hub)"
            ),
            status=status,
        )
    return file.error(N_("{model}: {file} answered {status}"), status=status)


def _too_large(file: _File, max_bytes: int) -> HubError:
    return file.error(
        N_("{model}: {file} is larger than {limit} bytes; not read"), limit=format(max_bytes, ",")
    )


def _timed_out(file: _File, seconds_limit: float) -> HubError:
    return file.error(
        N_("{model}: the hub did not answer {file} within {seconds} s"), seconds=format(seconds_limit, "g")
    )


def _json_object(file: _File, body: bytes) -> dict[str, Any]:
    """``body`` as a JSON object; its nesting is checked first (json.loads recurses)."""
    if json_depth_exceeds(body):
        raise file.error(
            N_("{model}: {file} is nested deeper than {limit} levels; not read"), limit=MAX_JSON_DEPTH
        )
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise file.error(N_("{model}: {file} is not valid JSON")) from None
    if not isinstance(data, dict):
        raise file.error(N_("{model}: {file}: top level must be a JSON object"))
    return data


# ----------------------------------------------------------------------------------------------
# The index: only its leading "metadata" object
# ----------------------------------------------------------------------------------------------

_METADATA_KEY = b'"metadata"'
_WHITESPACE = b" \t\r\n"


def _object_end(text: bytes) -> int | None:
    """Where the JSON object that starts ``text`` ends (one past its ``}``), None if not within ``text``."""
    depth = 0
    in_string = False
    escaped = False
    for i, byte in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x7B, 0x5B):  # { [
            depth += 1
        elif byte in (0x7D, 0x5D):  # } ]
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def leading_metadata(head: bytes) -> tuple[bool, bytes | None]:
    """From the first bytes of an index: (done, the ``metadata`` object's text or None).

    ``done`` is False while more bytes could still complete it; True with None when the index does not
    start with a metadata object (then the weights come from the parameter count)."""
    text = head.lstrip(_WHITESPACE)
    if not text:
        return False, None
    if text[:1] != b"{":
        return True, None
    rest = text[1:].lstrip(_WHITESPACE)
    if len(rest) < len(_METADATA_KEY):
        return (False, None) if _METADATA_KEY.startswith(rest) else (True, None)
    if not rest.startswith(_METADATA_KEY):
        return True, None
    rest = rest[len(_METADATA_KEY) :].lstrip(_WHITESPACE)
    if not rest:
        return False, None
    if rest[:1] != b":":
        return True, None
    value = rest[1:].lstrip(_WHITESPACE)
    if not value:
        return False, None
    if value[:1] != b"{":
        return True, None
    end = _object_end(value[:METADATA_MAX_BYTES])
    if end is None:
        return len(value) >= METADATA_MAX_BYTES, None
    return True, value[:end]


def _index_metadata(file: _File, *, deadline: Deadline, token: str | None) -> dict[str, Any] | None:
    """``metadata`` of the index (only ``total_size`` kept), None without an index or a leading metadata."""
    found: list[bytes | None] = []

    def enough(body: bytes) -> bool:
        done, metadata = leading_metadata(body)
        if done:
            found.append(metadata)
        return done or len(body) >= INDEX_SCAN_BYTES

    body = _get(file, deadline=deadline, max_bytes=INDEX_SCAN_BYTES, token=token, enough=enough)
    if body is None:
        return None
    if not found:  # the whole (short) file was read without the scan deciding
        found.append(leading_metadata(body)[1])
    if found[0] is None:
        return None
    raw = _json_object(file, found[0])
    if raw.get("total_size") is None:
        raise file.error(N_("{model}: {file} has no metadata.total_size"))
    return {"total_size": raw["total_size"]}


# ----------------------------------------------------------------------------------------------
# What is kept: the config and the index's metadata (the weight map is not needed)
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fetched:
    config: dict[str, Any]
    index_metadata: dict[str, Any] | None  # model.safetensors.index.json "metadata", None if absent
    source: str  # the config.json URL
    hf_quant_config: dict[str, Any] | None = None  # read only when config.json has no quantization_config


def fetch(ref: HubRef, *, base: str, seconds: float | None = None) -> Fetched:
    """Both files of ``ref``, within ``seconds`` in all (default TOTAL_SECONDS; the sockets are shut
    at the deadline)."""
    token = os.environ.get(ENV_TOKEN, "").strip() or None
    config_file = _File(ref, CONFIG_FILE_NAME, file_url(base, ref, CONFIG_FILE_NAME))
    deadline = Deadline(TOTAL_SECONDS if seconds is None else seconds)
    try:
        body = _get(config_file, deadline=deadline, max_bytes=CONFIG_MAX_BYTES, token=token)
        if body is None:
            raise HubError(
                Text(
                    "{model} is not in the catalog and its config.json was not found on the hub (check the id and revision)",
                    model=ref.label,
                )
            )
        config = _json_object(config_file, body)
        index_file = _File(ref, SAFETENSORS_INDEX_FILE_NAME, file_url(base, ref, SAFETENSORS_INDEX_FILE_NAME))
        metadata = _index_metadata(index_file, deadline=deadline, token=token)
        hf_quant = None
        if config.get("quantization_config") is None:  # vLLM reads the side file only then (ModelOpt <= 0.29)
            quant_file = _File(ref, HF_QUANT_CONFIG_FILE_NAME, file_url(base, ref, HF_QUANT_CONFIG_FILE_NAME))
            quant_body = _get(quant_file, deadline=deadline, max_bytes=CONFIG_MAX_BYTES, token=token)
            hf_quant = _json_object(quant_file, quant_body) if quant_body is not None else None
    finally:
        deadline.cancel()
    return Fetched(config=config, index_metadata=metadata, source=config_file.url, hf_quant_config=hf_quant)


# ----------------------------------------------------------------------------------------------
# The disk cache: capped in bytes and files, oldest evicted
# ----------------------------------------------------------------------------------------------


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
        if path.stat().st_size > CONFIG_MAX_BYTES + METADATA_MAX_BYTES + 4096:
            return None
        text = path.read_text(encoding="utf-8")
        entry = None if json_depth_exceeds(text, MAX_JSON_DEPTH + 2) else json.loads(text)
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(entry, dict) or entry.get("format") != CACHE_FORMAT:
        return None
    fresh = (
        _COMMIT_RE.fullmatch(ref.revision)
        or time.time() - float(entry.get("fetched_at", 0)) < CACHE_TTL_SECONDS
    )
    config, metadata, source = entry.get("config"), entry.get("index_metadata"), entry.get("source")
    if not fresh or not isinstance(config, dict) or not isinstance(source, str):
        return None
    if metadata is not None and not isinstance(metadata, dict):
        return None
    hf_quant = entry.get("hf_quant_config")
    if hf_quant is not None and not isinstance(hf_quant, dict):
        return None
    return Fetched(config=config, index_metadata=metadata, source=source, hf_quant_config=hf_quant)


# Written since this process last scanned the cache directory: files, bytes. evict_disk_cache lists and
# stats every entry (2,048 files at the cap: ~10 ms of CPU holding the GIL), so it runs once a tenth of
# either cap has been written since its last scan, not after every write; eviction takes the cache down
# to 90 %, so it stays within its caps (plus a tenth per other worker process sharing the directory).
_written_since_scan = [0, 0]


def _write_cache(path: Path, fetched: Fetched) -> None:
    entry = {
        "format": CACHE_FORMAT,
        "fetched_at": time.time(),
        "source": fetched.source,
        "config": fetched.config,
        "index_metadata": fetched.index_metadata,
        "hf_quant_config": fetched.hf_quant_config,
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, suffix=".tmp", delete=False) as fh:
            json.dump(entry, fh)
            written = fh.tell()
        os.replace(fh.name, path)
    except OSError:
        return  # a read-only cache only costs a re-fetch
    with _lock:
        _written_since_scan[0] += 2  # the entry and its lock file (_across_workers)
        _written_since_scan[1] += written
        due = (
            _written_since_scan[0] >= max(1, DISK_CACHE_MAX_FILES // 10)
            or _written_since_scan[1] >= DISK_CACHE_MAX_BYTES // 10
        )
        if due:
            _written_since_scan[:] = [0, 0]
    if due:
        evict_disk_cache(path.parent)


def evict_disk_cache(directory: Path, *, max_bytes: int | None = None, max_files: int | None = None) -> int:
    """Delete the oldest entries until the cache holds at most ``max_files`` and ``max_bytes`` (default
    DISK_CACHE_MAX_FILES, DISK_CACHE_MAX_BYTES), down to 90 % of each so a full cache is not scanned
    on every write; returns how many went."""
    max_bytes = DISK_CACHE_MAX_BYTES if max_bytes is None else max_bytes
    max_files = DISK_CACHE_MAX_FILES if max_files is None else max_files
    entries: list[tuple[float, int, Path]] = []
    with suppress(OSError), os.scandir(directory) as it:
        for item in it:
            if item.name.endswith((".json", ".tmp", ".lock")) and item.is_file(follow_symlinks=False):
                with suppress(OSError):
                    stat = item.stat(follow_symlinks=False)
                    entries.append((stat.st_mtime, stat.st_size, Path(item.path)))
    total = sum(size for _, size, _ in entries)
    if len(entries) <= max_files and total <= max_bytes:
        return 0
    entries.sort()
    removed = 0
    for _, size, path in entries:
        if len(entries) - removed <= max_files * 9 // 10 and total <= max_bytes * 9 // 10:
            break
        with suppress(OSError):
            path.unlink()
        total -= size
        removed += 1
    return removed


# ----------------------------------------------------------------------------------------------
# Single flight, a pool of its own, a rate limit, bounded memory
# ----------------------------------------------------------------------------------------------


class _Bucket:
    """A token bucket: ``rate`` tokens a second, at most ``burst`` saved up."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = float(burst)
        self.last = time.monotonic()
        self.lock = threading.Lock()

    def _refill(self) -> None:
        now = time.monotonic()
        self.tokens = min(float(self.burst), self.tokens + (now - self.last) * self.rate)
        self.last = now

    def take(self) -> bool:
        with self.lock:
            self._refill()
            if self.tokens < 1.0:
                return False
            self.tokens -= 1.0
            return True

    def has_token(self) -> bool:
        """Whether ``take`` would succeed now (without taking)."""
        with self.lock:
            self._refill()
            return self.tokens >= 1.0


_Key = tuple[str, HubRef]
_lock = threading.Lock()
_specs: OrderedDict[_Key, ModelSpec] = OrderedDict()
_failures: OrderedDict[_Key, tuple[float, HubError]] = OrderedDict()
_inflight: dict[_Key, Future[ModelSpec]] = {}
_pool = ThreadPoolExecutor(max_workers=FETCH_WORKERS, thread_name_prefix="kvplan-hub")
_bucket = _Bucket(FETCH_RATE_PER_S, FETCH_BURST)
stats = {"network_fetches": 0}  # what the tests and bench/hostile.py count


def _remember(cache: OrderedDict[_Key, Any], key: _Key, value: Any, limit: int) -> None:
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > limit:
        cache.popitem(last=False)


def _convert(ref: HubRef, fetched: Fetched) -> ModelSpec:
    index = {"metadata": fetched.index_metadata} if fetched.index_metadata is not None else None
    try:
        return model_spec_from_hf_config(
            fetched.config,
            name=ref.label,
            safetensors_index=index,
            hf_quant_config=fetched.hf_quant_config,
            source=fetched.source,
        )
    except HubError:
        raise
    except PlannerError as exc:
        raise HubError(
            Text(
                "the config.json of {model} cannot be read: {field}: {message}",
                model=ref.label,
                field=exc.field,
                message=exc.message,
            )
        ) from exc


@contextmanager
def _across_workers(path: Path) -> Iterator[None]:
    """An advisory lock on ``path``'s id, held while it is fetched: single flight across the worker
    processes of one server (they share the disk cache). Waits at most a fetch's time; without a
    writable cache directory it is skipped (each process then fetches on its own)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(path.with_suffix(".lock"), "a+b")  # noqa: SIM115 - held across the yield
    except OSError:
        yield
        return
    try:
        waited_until = time.monotonic() + TOTAL_SECONDS + WAIT_MARGIN_SECONDS
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if time.monotonic() > waited_until:
                    break  # the other worker's fetch is past its own deadline: go ahead
                time.sleep(0.05)
        yield
    finally:
        handle.close()  # releases the lock


def _rate_reached(ref: HubRef) -> HubError:
    rate = format(FETCH_RATE_PER_S, "g")
    return HubError(
        Text(
            "too many models fetched from the hub just now (at most {rate} a second); try {model} again in a few seconds",
            rate=rate,
            model=ref.label,
        ),
        transient=True,
    )


def _fetch_and_cache(base: str, ref: HubRef, path: Path) -> Fetched:
    """The network fetch (one token of the rate limit), written to the disk cache."""
    if not _bucket.take():
        raise _rate_reached(ref)
    stats["network_fetches"] += 1
    fetched = fetch(ref, base=base)
    _write_cache(path, fetched)
    return fetched


def _load(base: str, ref: HubRef, key: _Key) -> ModelSpec:
    """On the hub's pool: the disk cache, else the network (one rate token), then the memory caches."""
    try:
        path = _cache_file(base, ref)
        # an entry on disk needs no lock; with the rate reached no lock file is made for a fetch that
        # would be refused anyway (3,000 distinct ids made 2,630 lock files, N5)
        fetched = _read_cache(path, ref)
        if fetched is None and not _bucket.has_token():
            raise _rate_reached(ref)
        if fetched is None:
            with _across_workers(path):  # another worker fetching this id: wait, then read its cache entry
                fetched = _read_cache(path, ref) or _fetch_and_cache(base, ref, path)
        spec = _convert(ref, fetched)
    except HubError as exc:
        with _lock:
            _inflight.pop(key, None)
            if not exc.transient:
                _remember(_failures, key, (time.monotonic(), exc), FAILURE_CACHE_ENTRIES)
        raise
    except Exception:
        with _lock:
            _inflight.pop(key, None)
        raise
    with _lock:
        _inflight.pop(key, None)
        _remember(_specs, key, spec, SPEC_CACHE_ENTRIES)
    return spec


def spec_future(ref: HubRef) -> Future[ModelSpec]:
    """The spec of ``ref`` as a future: done at once from memory, else the one fetch in flight for it.

    Raises HubError at once when every fetch worker is busy with other ids."""
    base = endpoint()
    key = (base, ref)
    done: Future[ModelSpec] = Future()
    with _lock:
        if key in _specs:
            _specs.move_to_end(key)
            done.set_result(_specs[key])
            return done
        failed = _failures.get(key)
        if failed is not None and time.monotonic() - failed[0] < FAILURE_TTL_SECONDS:
            done.set_exception(failed[1])
            return done
        running = _inflight.get(key)
        if running is not None:
            return running
        if len(_inflight) >= FETCH_WORKERS:
            raise HubError(
                Text(
                    "the hub is busy with {count} other models; try {model} again in a few seconds",
                    count=len(_inflight),
                    model=ref.label,
                ),
                transient=True,
            )
        future = _pool.submit(_load, base, ref, key)
        _inflight[key] = future
    return future


def hub_model(ref: HubRef) -> ModelSpec:
    """The ModelSpec of ``ref`` from the hub (memory, then disk cache, then the network), waiting at
    most a second longer than a fetch may take."""
    future = spec_future(ref)
    try:
        return future.result(timeout=TOTAL_SECONDS + WAIT_MARGIN_SECONDS)
    except FutureTimeout:
        raise _timed_out(_File(ref, CONFIG_FILE_NAME, ""), TOTAL_SECONDS) from None


@asynccontextmanager
async def _not_stepping_aside() -> AsyncIterator[None]:
    yield


# How an async route steps aside while it waits for a fetch: the web layer sets this per request
# (app.web.admission.stepped_aside gives up the request's computing slot, so a hub that takes 10 s to
# answer holds none of a worker's slots); outside a request, nothing.
network_wait: ContextVar[Callable[[], AbstractAsyncContextManager[None]]] = ContextVar(
    "hub_network_wait", default=_not_stepping_aside
)


async def prefetch(model_id: str) -> None:
    """For async routes, before they resolve: wait (without holding a thread) for the fetch of a hub id
    the catalog lacks, so the resolve that follows finds the spec, or the failure, in memory."""
    if not enabled():
        return
    try:
        find_model(model_id)
        return
    except UnknownModelError:
        pass
    ref = parse_ref(model_id)
    if ref is None:
        return
    try:
        future = spec_future(ref)
    except HubError:
        return  # busy: the resolve says so
    if future.done():
        return  # from memory: the resolve reads it at once
    waiting = asyncio.wrap_future(future)
    async with network_wait.get()():  # the web layer's computing slot is given up meanwhile
        done, _ = await asyncio.wait({waiting}, timeout=TOTAL_SECONDS + WAIT_MARGIN_SECONDS)
    if done:
        waiting.exception()  # retrieved here; the resolve that follows raises it again
    else:
        waiting.cancel()  # only this wait: the fetch itself is running and ends at its deadline


async def prefetch_items(items: list[tuple[str, str]]) -> None:
    """``prefetch`` for a route that has only the raw form or query items: the model id, unless a pasted
    config or a model card (which win over it) is given."""
    if not enabled() or any(key == "config_json" or key.startswith("card_") for key, value in items if value):
        return
    model = next((value for key, value in reversed(items) if key == "model"), "")
    if model:
        await prefetch(model)


def warm_up() -> None:
    """At a worker's start, with the hub on: make the TLS context its fetches share (transport.tls_context),
    so the first fetch does not parse the CA bundle while requests wait on the GIL."""
    if enabled():
        transport.tls_context()


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
