"""What a page weighs on a student's phone: Lighthouse's mobile profile (simulated slow 4G, 4x CPU slowdown).

Run by hand from the repo root (never as a timed test)::

    .venv/bin/python -m benchmarks.page_weight                    # the five pages, once each
    .venv/bin/python -m benchmarks.page_weight --only join --runs 3 --json weight.json

Per page: Lighthouse's performance score, first and largest contentful paint, total blocking time, and
the bytes of every request on the wire and the same resources uncompressed (its network-requests audit),
with the three largest on the wire. WebSocket frames are not requests there: a Streamlit page's messages
(tens of KiB here) are not counted. The pages, measured in one run: the Explorer (``/``); the take-home
Explorer folder (``python -m ui.take_home``) served gzip-compressed by Starlette; a live class's
student page (``--join-path``), the class made directly in a Redis that the app's server uses; the lesson for
one person (``/study``) on its first tour step and on its Explorer.

Each page is first visited once, not counted (``--warmup``): a page that a server runs for the first
time can end before its charts, and a class's server has run it before. With ``--runs N`` each figure
is the median of N; the pages take turns, so they share the machine's state, whose speed Lighthouse
gives as its CPU index (higher is faster). Every measurement is cold (a fresh Chromium profile, Debian's).
Lighthouse 12.2.3 is an npm package of its own (``benchmarks/lighthouse/``), installed here by ``npm ci``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import uvicorn
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from server.class_store import RedisStore
from testbed.local_server import CHROMIUM, HEALTH_TIMEOUT, free_port, redis_server, streamlit_server
from ui.live_class import new_code, new_key, start

ROOT = Path(__file__).resolve().parents[1]
LIGHTHOUSE = Path(__file__).resolve().parent / "lighthouse"
PAGES = ("explorer", "take_home", "join", "study", "study_explorer")
STUDY = {"study": "/study?lang=en", "study_explorer": "/study?part=explorer&lang=en"}  # a tour step, the Explorer
CHROME_FLAGS = ("--headless=new --no-sandbox --disable-gpu --disable-quic --no-first-run "
                "--disable-background-networking --disable-component-update --disable-sync")
RUN_TIMEOUT = 300.0  # seconds for one Lighthouse run
TIMINGS = {"fcp_ms": "first-contentful-paint", "lcp_ms": "largest-contentful-paint",
           "tbt_ms": "total-blocking-time"}
MIB = 1024 * 1024


def lighthouse_cli() -> Path:
    """The pinned Lighthouse's CLI, ``npm ci`` first when its node_modules is missing or older than the lock."""
    installed = LIGHTHOUSE / "node_modules" / ".package-lock.json"  # npm writes it last
    if not installed.exists() or installed.stat().st_mtime < (LIGHTHOUSE / "package-lock.json").stat().st_mtime:
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=LIGHTHOUSE, check=True, timeout=600)
    return LIGHTHOUSE / "node_modules" / ".bin" / "lighthouse"


def lighthouse(cli: Path, url: str, report_path: Path) -> dict:
    """One cold Lighthouse run of ``url``, mobile profile, performance only; its JSON report."""
    command = [str(cli), url, "--output=json", f"--output-path={report_path}", "--only-categories=performance",
               f"--chrome-flags={CHROME_FLAGS}", "--disable-full-page-screenshot", "--quiet"]
    done = subprocess.run(command, env={**os.environ, "CHROME_PATH": CHROMIUM}, capture_output=True, text=True,
                          timeout=RUN_TIMEOUT)
    if done.returncode != 0:
        raise RuntimeError(f"lighthouse {url} exited with {done.returncode}:\n{done.stderr[-3000:]}")
    report = json.loads(report_path.read_text())
    if "runtimeError" in report:
        raise RuntimeError(f"lighthouse {url}: {report['runtimeError']}")
    return report


def figures(report: dict) -> dict:
    """A Lighthouse report's figures: the score (0-100), paint and blocking times (ms), the requests' bytes
    on the wire (transferSize) and uncompressed (resourceSize), and the three largest on the wire."""
    audits, origin = report["audits"], "/".join(report["finalDisplayedUrl"].split("/", 3)[:3])  # scheme://host
    requests = audits["network-requests"]["details"]["items"]
    largest = sorted(requests, key=lambda r: r.get("transferSize", 0), reverse=True)[:3]
    return {"score": round(report["categories"]["performance"]["score"] * 100),
            "benchmark_index": report["environment"]["benchmarkIndex"],
            **{name: audits[audit]["numericValue"] for name, audit in TIMINGS.items()},
            "requests": len(requests),
            "wire_bytes": sum(r.get("transferSize", 0) for r in requests),
            "uncompressed_bytes": sum(r.get("resourceSize", 0) for r in requests),
            "largest": [{"url": r["url"].removeprefix(origin), "wire_bytes": r.get("transferSize", 0),
                         "uncompressed_bytes": r.get("resourceSize", 0)} for r in largest]}


def median_figures(runs: list[dict]) -> dict:
    """Each number's median over ``runs``; the largest requests as the run of median bytes saw them."""
    middle = sorted(runs, key=lambda run: run["wire_bytes"])[(len(runs) - 1) // 2]
    return {key: (middle[key] if key == "largest" else statistics.median(run[key] for run in runs))
            for key in runs[0]}


@contextlib.contextmanager
def compressed_folder(folder: Path):
    """``folder`` served by Starlette's StaticFiles behind its GZipMiddleware (uvicorn, in a thread)."""
    app = Starlette(routes=[Mount("/", StaticFiles(directory=folder, html=True))],
                    middleware=[Middleware(GZipMiddleware)])
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + HEALTH_TIMEOUT
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the take-home folder's server did not start on port {port}")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def take_home_folder(out: Path) -> Path:
    """The take-home Explorer, exported as a teacher exports it."""
    subprocess.run([sys.executable, "-m", "ui.take_home", "--out", str(out)], cwd=ROOT, check=True,
                   capture_output=True, timeout=300)
    return out


def student_page(base: str, redis_url: str, join_path: str) -> str:
    """The URL of a live class's student page (``join_path``), for a class made directly in the store."""
    code = new_code()
    RedisStore(redis_url).create(start(code, new_key(), "en"))
    return f"{base}{join_path}?class={code}&lang=en"


def page_urls(pages: list[str], join_path: str, work: Path, stack: contextlib.ExitStack) -> dict[str, str]:
    """Each chosen page's URL, its servers started on ``stack``."""
    urls = {}
    if "take_home" in pages:
        urls["take_home"] = stack.enter_context(compressed_folder(take_home_folder(work / "take-home")))
    if {"explorer", "join", *STUDY} & set(pages):
        redis_url = stack.enter_context(redis_server(work / "redis.log", ROOT)) if "join" in pages else None
        env = {**os.environ, **({"BLOCKSTAB_CLASS_STORE": redis_url, "BLOCKSTAB_ADDRESS_KEY": "benchmark" * 4}
                                if redis_url else {})}
        base, _ = stack.enter_context(streamlit_server("app.py", work / "server.log", ROOT, env=env))
        if "explorer" in pages:
            urls["explorer"] = f"{base}/?lang=en"
        if "join" in pages:
            urls["join"] = student_page(base, redis_url, join_path)
        urls |= {page: f"{base}{path}" for page, path in STUDY.items() if page in pages}
    return {page: urls[page] for page in pages}


def table(results: dict[str, dict]) -> str:
    """The figures as a readable table, then each page's three largest requests."""
    lines = [f"{'page':<15}{'score':>6}{'FCP s':>8}{'LCP s':>8}{'TBT ms':>8}{'requests':>10}"
             f"{'wire MiB':>10}{'uncompressed MiB':>18}{'CPU index':>11}"]
    for page, f in results.items():
        lines.append(f"{page:<15}{f['score']:>6.0f}{f['fcp_ms'] / 1000:>8.1f}{f['lcp_ms'] / 1000:>8.1f}"
                     f"{f['tbt_ms']:>8.0f}{f['requests']:>10.0f}{f['wire_bytes'] / MIB:>10.2f}"
                     f"{f['uncompressed_bytes'] / MIB:>18.2f}{f['benchmark_index']:>11.0f}")
    for page, f in results.items():
        lines.append(f"\n{page}: largest on the wire (KiB on the wire / uncompressed)")
        lines += [f"  {r['wire_bytes'] / 1024:>8.0f} / {r['uncompressed_bytes'] / 1024:>8.0f}  {r['url'][:100]}"
                  for r in f["largest"]]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=",".join(PAGES), help=f"pages, comma-separated (default {','.join(PAGES)})")
    parser.add_argument("--runs", type=int, default=1, help="runs per page; more than 1 reports the medians")
    parser.add_argument("--warmup", type=int, default=1,
                        help="runs per page first, not counted (default 1)")
    parser.add_argument("--join-path", default="/join", help="the student page's path (default /join)")
    parser.add_argument("--json", type=Path, help="write every run's figures and the medians to this file")
    args = parser.parse_args()
    pages = [page for page in PAGES if page in args.only.split(",")]
    if not pages or set(args.only.split(",")) - set(PAGES):
        parser.error(f"--only takes some of {','.join(PAGES)}")
    runs, warmups = max(1, min(args.runs, 20)), max(0, min(args.warmup, 5))
    cli = lighthouse_cli()
    work = Path(tempfile.mkdtemp(prefix="blockstab-weight-"))
    measured: dict[str, list[dict]] = {page: [] for page in pages}
    with contextlib.ExitStack() as stack:
        urls = page_urls(pages, args.join_path, work, stack)
        for kind, n in [("warm-up", n) for n in range(1, warmups + 1)] + [("run", n) for n in range(1, runs + 1)]:
            for page, url in urls.items():  # the pages take turns
                print(f"{kind} {n}: {page} {url}", file=sys.stderr, flush=True)
                report = lighthouse(cli, url, work / f"{page}-{kind}-{n}.json")
                version = report["lighthouseVersion"]
                if kind == "run":
                    measured[page].append(figures(report))
    results = {page: median_figures(measured[page]) for page in pages}
    print(f"Lighthouse {version}, mobile profile (simulated slow 4G, 4x CPU slowdown), cold; "
          f"{'median of ' + str(runs) + ' runs' if runs > 1 else '1 run'} after {warmups} not counted; "
          f"load average {os.getloadavg()[0]:.1f}; reports in {work}\n")
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps({"runs": runs, "urls": urls, "median": results, "every_run": measured},
                                        indent=1))


if __name__ == "__main__":
    main()
