"""The lesson for one person, light on a phone (``GET /study``, ``ui.study_page``): a page of the app's own, no
Streamlit session; everything it reads is a file a live class's student page reads too, made once and kept
(``server.class_files``)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from ui.student_page import phone_look
from ui.study_page import ROUTE, opened, page

from .class_files import prefix
from .class_routes import text_for


async def study_page(request: Request) -> HTMLResponse:
    """The page its link opens (its part, tour step and Explorer view; a setting it cannot use named at the top)."""
    html = page(text_for(request), opened(request.query_params), phone_look(request.headers.get("user-agent", "")),
                prefix())
    return HTMLResponse(html, headers={"Cache-Control": "no-cache"})


ROUTES = [Route(ROUTE, study_page, methods=["GET"])]
