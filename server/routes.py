"""The HTTP routes BlockStab serves beside Streamlit's own (``server.asgi``): the Explorer's bundles, the
version a teacher's page polls, a live class's student side (``server.class_routes``) and the lesson for one
person (``server.study_routes``)."""

from __future__ import annotations

import re
import secrets

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from ui.controls import BY_KEY

from .bundles import ROUTE, bundles_folder
from .class_routes import ROUTES as CLASS_ROUTES
from .class_store import class_store, followed
from .study_routes import ROUTES as STUDY_ROUTES

BUNDLE_FILE = re.compile(r"[0-9a-f]{32}-(index|[a-z0-9-]+)\.js")  # server.bundles.file_name's
CLASS_VERSION = "/api/class/{code}/version"  # ?me=<a student's or the teacher's token>: what a class's pages poll
PROCESS = secrets.token_hex(8)  # this server process: a page polling another (its replica died) runs again


def class_version(request: Request) -> JSONResponse:
    """``{"version": V, "process": PROCESS}``: what the page of ``me`` shows of the class
    (``server.class_store.followed``), else ``null`` (ended, never was, not joined or malformed: all
    alike). A plain function: Starlette runs it in a thread (Redis blocks)."""
    code = BY_KEY["class"].parse(request.path_params["code"])
    me = BY_KEY["me"].parse(request.query_params.get("me", ""))
    version = followed(class_store(), code, me) if code and me else None
    return JSONResponse({"version": version, "process": PROCESS}, headers={"Cache-Control": "no-store"})


async def bundle_file(request: Request) -> Response:
    """A bundle's file (``server.bundles``), compressed on the way by Streamlit's middleware. A part never
    changes under its name, so the browser keeps it; the index lists the parts built so far, so it is
    asked for afresh."""
    name = request.path_params["name"]
    if not (found := BUNDLE_FILE.fullmatch(name)):
        return PlainTextResponse("not found", 404)
    try:
        body = await run_in_threadpool((bundles_folder() / name).read_bytes)
    except FileNotFoundError:  # not built yet, let go, or named by no session of this process
        return PlainTextResponse("not found", 404)
    kept = "no-cache" if found[1] == "index" else "public, max-age=31536000, immutable"
    return Response(body, media_type="text/javascript", headers={"Cache-Control": kept})


ROUTES = [Route(CLASS_VERSION, class_version, methods=["GET"]), Route(ROUTE + "{name}", bundle_file, methods=["GET"]),
          *CLASS_ROUTES, *STUDY_ROUTES]
