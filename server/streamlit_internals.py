"""Every use of a Streamlit internal, in one place, for the one Streamlit this app is pinned to: imported with
another, it fails at once and names what to check, rather than misbehaving quietly. Everything else uses
Streamlit's public API; the CSS and tests that find Streamlit's elements by ``data-testid`` are pinned by
tests/server/test_streamlit_internals.py, which reads the frontend this version ships."""

from __future__ import annotations

from pathlib import Path

import streamlit

PINNED = "1.67.0"  # requirements.txt
if streamlit.__version__ != PINNED:
    raise ImportError(f"BlockStab uses Streamlit {PINNED}'s internals (server/streamlit_internals.py), not "
                      f"{streamlit.__version__}'s: check each one against the new version, then change PINNED")

# (imported after the check: another version may not have them)
from streamlit.components.v2.manifest_scanner import ComponentConfig, ComponentManifest  # noqa: E402
from streamlit.runtime import Runtime  # noqa: E402
from streamlit.runtime.app_session import AppSession  # noqa: E402
from streamlit.runtime.pages_manager import PagesManager  # noqa: E402
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx  # noqa: E402
from streamlit.runtime.state import query_params  # noqa: E402
from streamlit.web.cli import main as streamlit_command  # noqa: E402

QUERY_FIELDS = query_params.CLIENT_STATE_QUERY_STRING_MAX_FIELDS  # a link's parameters Streamlit keeps at most
QUERY_BYTES = query_params.CLIENT_STATE_QUERY_STRING_MAX_LENGTH  # and its longest query string


def hook_rerun_requests(wrap) -> None:
    """Every session's run request (the browser's ``BackMsg.rerun_script``) goes through ``wrap(request)``,
    which gets the request as Streamlit handles it: ``request(session, state=None)``."""
    AppSession._handle_rerun_script_request = wrap(AppSession._handle_rerun_script_request)


def routed_by_navigation_only() -> None:
    """Tell Streamlit before any session starts that the app routes with ``st.navigation`` alone: it would take
    an app with a ``pages/`` folder for an old-style one until the first session ran (server/__main__.py)."""
    PagesManager.uses_pages_directory = False


def run_streamlit(args: list[str]) -> None:
    """``streamlit`` with ``args`` (e.g. ``run app.py``), in this process: after the hooks above are in."""
    streamlit_command(args, prog_name="streamlit")


def session_id() -> str:
    """This run's session."""
    return get_script_run_ctx().session_id


def query_string() -> str:
    """This run's query string as the browser sent it ("" outside a run)."""
    context = get_script_run_ctx()
    return context.query_string if context else ""


def query_kept(raw: str) -> bool:
    """Whether Streamlit keeps a query string this long (else it drops it whole)."""
    return bool(query_params.sanitize_query_string(raw))


def widget_key(widget_id: str) -> str:
    """A keyed widget's key, from its id (Streamlit 1.67 ends a keyed widget's id with ``-<key>``)."""
    return widget_id.rsplit("-", 1)[-1]


def serve_component_files(name: str, folder: str, package: Path) -> None:
    """Serve ``package/folder``'s files at ``/_stcore/bidi-components/blockstab.<name>/``: a component's manifest
    entry whose assets are that folder (the app's copy of Plotly.js, with no component around it)."""
    registry = Runtime.instance().bidi_component_registry
    if registry.get(f"blockstab.{name}") is None:
        manifest = ComponentManifest(name="blockstab", version="1", components=[ComponentConfig(name, folder)])
        registry.register_from_manifest(manifest, package)
