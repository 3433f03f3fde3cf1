"""The HTTP routes BlockStab serves beside Streamlit's own (``server.asgi``)."""

from __future__ import annotations

import secrets

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ui.controls import BY_KEY

from .class_store import class_store, followed

CLASS_VERSION = "/api/class/{code}/version"  # ?me=<the student's token>: what a student's page polls
PROCESS = secrets.token_hex(8)  # this server process: a page polling another (its replica died) runs again


def class_version(request: Request) -> JSONResponse:
    """``{"version": N, "process": PROCESS}``: the class's version for a student in it, else ``null``
    (ended, never was, not joined or malformed: all alike). A plain function: Starlette runs it in a
    thread (Redis blocks)."""
    code = BY_KEY["class"].parse(request.path_params["code"])
    me = BY_KEY["me"].parse(request.query_params.get("me", ""))
    version = followed(class_store(), code, me) if code and me else None
    return JSONResponse({"version": version, "process": PROCESS}, headers={"Cache-Control": "no-store"})


ROUTES = [Route(CLASS_VERSION, class_version, methods=["GET"])]
