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
interface), so that students' phones can open the app and join a live class. Where the arguments name no port
or address, the environment's ``PORT`` and ``BLOCKSTAB_ADDRESS`` do (a host's settings: the image sets ``0.0.0.0``);
else .streamlit/config.toml's, this machine only. A bad setting of the client's address
(``server.client_address``) stops it at once, saying which.

Streamlit is imported under ``__main__`` only: multiprocessing imports this module again in every
Depth-lab worker process (``server/lab_worker.py``), which needs none of it (it cost a worker about
1 s of CPU and Streamlit's memory).
"""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def streamlit_args(argv: list[str], env: dict[str, str]) -> list[str]:
    """``streamlit run``'s flags: ``argv`` with ``--lan`` as every interface, then ``PORT`` and ``BLOCKSTAB_ADDRESS``
    from ``env`` where ``argv`` names no port or address."""
    args = [part for arg in argv for part in (["--server.address", "0.0.0.0"] if arg == "--lan" else [arg])]
    for flag, name in (("--server.port", "PORT"), ("--server.address", "BLOCKSTAB_ADDRESS")):
        if env.get(name) and not any(arg == flag or arg.startswith(flag + "=") for arg in args):
            args += [flag, env[name]]
    return args


if __name__ == "__main__":
    from server.client_address import shared_key_missing, trusted

    try:
        trusted()
        from server import policy  # noqa: F401 - its settings read (a bad one raises, saying which)
    except ValueError as bad:
        sys.exit(str(bad))
    if missing := shared_key_missing(os.environ):
        sys.exit(missing)
    from server import fair_share, resume
    from server.streamlit_internals import routed_by_navigation_only, run_streamlit

    os.chdir(ROOT)  # .streamlit/config.toml is read from the working directory
    routed_by_navigation_only()
    resume.install()  # (before fair_share's gate, which then paces the whole-page run too)
    fair_share.install()
    run_streamlit(["run", str(ROOT / "server" / "asgi.py"), *streamlit_args(sys.argv[1:], dict(os.environ))])
