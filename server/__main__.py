"""``python -m server``: BlockStab's server, ``streamlit run`` of the app with its routes (``server.asgi``), one fix
and fair shares, in one process.

Streamlit 1.67 takes an app with a ``pages/`` folder for an old-style multipage app until the
first session runs ``st.navigation``. So the first session after a start that opens a deep link
(``/lab``, a teacher's link) was told "Page not found" over the right page. app.py routes with
``st.navigation`` alone, and the server is told so before any session starts
(tests/browser/test_browser.py checks both the fault and the fix). It also gives each session its
fair share of the server: reruns and WebSocket messages bounded per session (``fair_share.py``), and a
page back on a process that lost its session runs whole again (``resume.py``).
Arguments go to ``streamlit run`` (e.g. ``--server.port 8502``); ``--lan`` serves the LAN (every
interface), so that students' phones can open the app and join a live class. A bad setting of the client's
address (``server.client_address``) stops it at once, saying which.

Streamlit is imported under ``__main__`` only: multiprocessing imports this module again in every
Depth-lab worker process (``server/lab_worker.py``), which needs none of it (it cost a worker about
1 s of CPU and Streamlit's memory).
"""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

if __name__ == "__main__":
    from server import fair_share, resume
    from server.client_address import trusted
    from server.streamlit_internals import routed_by_navigation_only, run_streamlit

    try:
        trusted()
    except ValueError as bad:
        sys.exit(str(bad))
    os.chdir(ROOT)  # .streamlit/config.toml is read from the working directory
    routed_by_navigation_only()
    resume.install()  # (before fair_share's gate, which then paces the whole-page run too)
    fair_share.install()
    args = [part for arg in sys.argv[1:] for part in (["--server.address", "0.0.0.0"] if arg == "--lan" else [arg])]
    run_streamlit(["run", str(ROOT / "server" / "asgi.py"), *args])
