"""JSON answers serialised where they are computed (the route's thread), not on the event loop.

FastAPI serialises what a sync route returns after the route's thread has finished: for a ``dict``
it validates the dict again (in the thread pool: a copy) and dumps it with pydantic on the event loop,
where every other request waits behind it. A route that returns a :class:`Response` skips both, so:

* :func:`json_response` is Starlette's JSONResponse of plain JSON data (a json-mode dump: /api/estimate);
* :func:`dumped_response` is the bytes FastAPI's own ``dict[str, Any]`` response field would give (the
  same pydantic ``dump_json``: str subclasses, models, tuples and inf handled exactly as before) for the
  answers that hold models and translated sentences (/api/performance, /api/fleet, /api/recommend);
  tests/web/test_fast_paths.py compares the bytes with FastAPI's.

Declare ``response_model=dict[str, Any]`` on such a route so its OpenAPI schema stays the same.

Request bodies the other way: FastAPI decodes a JSON body (``json.loads``) on the event loop before a route
runs, ~10-50 ms for a 4 MB body (a pasted config.json; MAX_BODY_BYTES allows 6 MiB) that every other request
waits behind. A router with ``route_class=JsonBodyInThread`` decodes it in the thread pool first and hands
the route a request whose ``json()`` returns the result, so FastAPI's own reading, validation and errors
(and so the route's declared body model and its OpenAPI schema) are unchanged; only the decoding moves.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from json import loads as decode_json
from typing import Any

from fastapi import Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, Response
from fastapi.routing import APIRoute
from pydantic import TypeAdapter

JSON_MEDIA_TYPE = "application/json"
_ANSWER = TypeAdapter(dict[str, Any])  # what FastAPI builds for a route annotated ``-> dict[str, Any]``


def json_response(data: Any, *, status_code: int = 200) -> Response:
    """``data`` (plain JSON data: dicts, lists, str, int, float, bool, None) as a JSON response."""
    return JSONResponse(data, status_code=status_code)


def dumped_response(answer: dict[str, Any]) -> Response:
    """``answer`` as FastAPI answers a route returning it (pydantic's dump_json, by alias), made here."""
    return Response(_ANSWER.dump_json(answer, by_alias=True), media_type=JSON_MEDIA_TYPE)


class DecodedJsonRequest(Request):
    """The route's request with its body already read and its JSON decoded (in the thread pool):
    ``body()`` and ``json()`` are Starlette's public methods, overridden, so nothing depends on where
    Starlette keeps its own cache (round 8 set its private ``Request._json``)."""

    def __init__(self, request: Request, *, body: bytes, decoded: Any) -> None:
        super().__init__(request.scope, request.receive)
        self.body_bytes = body
        self.decoded_json = decoded

    async def body(self) -> bytes:
        return self.body_bytes

    async def json(self) -> Any:
        return self.decoded_json


async def decoded_json_body(request: Request) -> Request:
    """A JSON body (by its content type) decoded in the thread pool: the request that answers
    ``json()`` with it. A body that does not decode is left alone (the request as it is): FastAPI
    decodes it again and answers its own 422."""
    if "json" not in request.headers.get("content-type", "").lower():
        return request
    body = await request.body()
    if not body:
        return request
    try:
        decoded = await run_in_threadpool(decode_json, body)
    except ValueError:  # json.JSONDecodeError, or bytes that are not UTF-8/16/32
        return request
    return DecodedJsonRequest(request, body=body, decoded=decoded)


class JsonBodyInThread(APIRoute):
    """An APIRoute whose JSON request body is decoded off the event loop (:func:`decoded_json_body`)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def decoded_first(request: Request) -> Response:
            return await handler(await decoded_json_body(request))

        return decoded_first
