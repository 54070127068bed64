"""The "paste a vllm serve command" box: a paste read over the current inputs, its notes and errors.

The reading itself is the core's (:func:`app.core.command.parse_pasted`: `vllm serve`, `python -m
vllm.entrypoints.openai.api_server`, `docker run … vllm/vllm-openai …`, a compose service's
``command:``), the same reader the doctor uses on logs. This module turns its answer into what the
page shows: the filled inputs and the notes that travel with their permalink, or every problem of a
refused paste (shown where the verdict would be, so no verdict for other inputs is on screen).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from pydantic import ValidationError

from app.core import regex
from app.core.command import CommandError, image_release, parse_pasted
from app.core.errors import PlannerError
from app.core.pydantic_messages import message_of
from app.core.text import Text
from app.web.i18n import t
from app.web.inputs.params import PlannerParams, replace, serve_values
from app.web.inputs.problems import Problem, error_of

# Query keys that are messages for one page view, never part of the permalink.
NOTE_IGNORED_FLAGS = "ignored_flags"  # vLLM flags that do not move memory
NOTE_IGNORED_ARGS = "ignored_args"  # not vLLM arguments: docker's options, the compose service's keys
NOTE_IMAGE = "image"  # the container image the paste ran
PASTE_KEY = "command"  # a refused paste, carried so its errors can be reloaded and shared
NOTE_KEYS = (NOTE_IGNORED_FLAGS, NOTE_IGNORED_ARGS, NOTE_IMAGE, PASTE_KEY)
URL_PASTE_MAX_CHARS = 4096  # a refused paste longer than this is shown in place, not put in the URL
RESULT_ANCHOR = (
    "#results"  # the page opens at the result column (notes, verdict or the errors), on a phone too
)

# What a URL must not carry from a paste: secret values (`-e HF_TOKEN=hf_…`, `--api-key sk-…`)
_SECRET_ASSIGNMENT = regex.compile(
    r"(?i)(\b[A-Z0-9_]{0,64}(?:TOKEN|KEY|SECRET|PASSWORD)[A-Z0-9_]{0,64}=)[^\s\"']+"
)
_SECRET_FLAG = regex.compile(r"(--(?:api-key|hf-token|ssl-keyfile-password)(?:=|\s+))[^\s\"']+")
_HF_TOKEN = regex.compile(r"\bhf_[A-Za-z0-9]{20,64}\b")  # a Hugging Face token written anywhere
REDACTED = "<redacted>"


@dataclass(frozen=True)
class PasteRead:
    """A paste the parser took: the inputs it fills and the query of its notes."""

    params: PlannerParams
    notes: str  # "ignored_flags=…&ignored_args=…&image=…" ("" when there is nothing to say)


def read_paste(params: PlannerParams, command: str) -> PasteRead:
    """``command`` over ``params``: its flags replace the form's vLLM flags, its model the model, the
    image tag's release the release. PlannerError (a CommandError naming every problem) when refused."""
    if not command.strip():  # an empty box would reset every flag to vLLM's default
        raise PlannerError("command", Text("nothing was pasted: paste a vllm serve command first"))
    parsed = parse_pasted(command, vllm_version=params.resolved_version)
    changes = serve_values(parsed.serve)
    if parsed.model:
        changes["model"] = parsed.model  # an unknown name is the inputs' own error state (resolve)
    if parsed.wrapper.release:
        changes["vllm_version"] = parsed.wrapper.release
    try:
        filled = replace(params, **changes)
    except ValidationError as exc:
        # every value the form refuses, each in words (message_of drops pydantic's "Value error, ", which
        # the page showed: "tensor_parallel_size: Value error, must be a power of two"; walk11)
        problems = [
            PlannerError(str(e["loc"][0]) if e["loc"] else "command", message_of(e)) for e in exc.errors()
        ]
        raise CommandError(
            unrecognized=[], problems=problems, known=frozenset(), vllm_version=params.resolved_version
        ) from exc
    notes = {
        NOTE_IGNORED_FLAGS: redact(" ".join(parsed.unknown_flags)),  # `--api-key sk-…` is a real flag
        NOTE_IGNORED_ARGS: " ".join(parsed.wrapper.ignored),
        NOTE_IMAGE: parsed.wrapper.image,
    }
    return PasteRead(filled, urlencode({k: v for k, v in notes.items() if v}))


def redact(text: str) -> str:
    """``text`` with secret values replaced (what a URL may carry of a paste)."""
    text = _SECRET_ASSIGNMENT.sub(r"\1" + REDACTED, text)
    return _HF_TOKEN.sub(REDACTED, _SECRET_FLAG.sub(r"\1" + REDACTED, text))


def url_copy(command: str) -> str | None:
    """The refused paste as its URL carries it: secret values replaced; None when too long for a URL."""
    text = redact(command)
    return text if len(text) <= URL_PASTE_MAX_CHARS else None


def problems_of_paste(exc: PlannerError, params: PlannerParams) -> tuple[Problem, ...]:
    """Every problem of a refused paste, one line each: each unknown flag with its nearest real one,
    then each value that cannot be read (naming its field)."""
    if not isinstance(exc, CommandError):
        return (error_of(exc),)
    release = exc.vllm_version or params.resolved_version
    lines = []
    for flag, suggestion in exc.unrecognized:
        message = (
            Text(
                "not an argument of vllm serve in vLLM {release}; did you mean {suggestion}?",
                release=release,
                suggestion=suggestion,
            )
            if suggestion
            else Text("not an argument of vllm serve in vLLM {release}", release=release)
        )
        lines.append(error_of(PlannerError(flag, message)))
    return (*lines, *(error_of(p) for p in exc.problems))


def paste_notes(query: dict[str, str]) -> tuple[str, ...]:
    """The notes a filled permalink carries, as sentences in the request's language."""
    notes = []
    image = query.get(NOTE_IMAGE, "")[:200]
    if image:
        release = image_release(image)
        notes.append(
            t(
                "Image {image}: planned as vLLM {release}, the release its tag names",
                image=image,
                release=release,
            )
            if release
            else t(
                "Image {image}: its tag names no vLLM release, so the release in the form is used",
                image=image,
            )
        )
    if query.get(NOTE_IGNORED_ARGS):
        notes.append(t("Not vLLM arguments, ignored: {args}", args=query[NOTE_IGNORED_ARGS]))
    if query.get(NOTE_IGNORED_FLAGS):
        notes.append(
            t(
                "Flags of the pasted command that do not move memory were left out: {flags}",
                flags=query[NOTE_IGNORED_FLAGS],
            )
        )
    return tuple(notes)
