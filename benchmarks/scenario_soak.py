"""Soak: many sessions mixing valid and hostile input for minutes; the server must not fail or grow.

Run by hand from the repo root (never as a timed test)::

    .venv/bin/python -m benchmarks.scenario_soak                    # 40 sessions, 180 s
    .venv/bin/python -m benchmarks.scenario_soak --seconds 60 --sessions 10 --json /tmp/soak.json

It starts ``app.py`` (free localhost port, headless) and runs ``--sessions`` protocol sessions
(testbed/protocol_client.py: Streamlit's WebSocket protocol on loopback, no browser), joining one every
``--join-every`` seconds. Each loops until the deadline: pause (random), then one of

* an Explorer rerun (residual toggle or a depth step) on the session's example;
* a valid edit in the scenario editor's table (a new label or coordinate);
* an invalid edit (empty token, NaN, inf, 1e308, text in a number cell, a second action token,
  three empty tokens, too many rows, a 5,000-character label), each invalid for any table;
* an impossible edit (rows that do not exist; only a hostile client sends it);
* a fresh session opened on a random link: a preset, a valid or a tampered/truncated/huge
  ``sc=``, a bad depth, unknown or unicode keys.

Checked: every run finishes (no timeout, no failed script), no exception element is sent, the
server log has no traceback, a valid edit changes the link's ``sc`` and an invalid one leaves it
(the last good example stays), and the server's RSS stays bounded (peak, and the slope over the
last half of the run). Every 2 s the server's RSS and CPU are sampled.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

from streamlit.proto.WidgetStates_pb2 import WidgetState

from benchmarks import harness as h
from benchmarks.classroom_load import slope_mb_per_min
from blockstab.scenario import PRESETS, Scenario, Token, encode
from testbed.protocol_client import ProtocolSession

TIMEOUT_S = 30.0
EDITOR = "editor_table_"
INVALID_EDITS = {
    "empty token": {"edited_rows": {"1": {"label": ""}}},
    "NaN": {"edited_rows": {"1": {"x": "NaN"}}},
    "infinity": {"edited_rows": {"2": {"y": "inf"}}},
    "1e308": {"edited_rows": {"0": {"x": "1e308"}}},
    "text in a number cell": {"edited_rows": {"3": {"y": "twelve"}}},
    "second action token": {"edited_rows": {"0": {"role": "action"}, "1": {"role": "action"}}},
    "three empty tokens": {"edited_rows": {str(n): {"label": ""} for n in range(3)}},
    "too many rows": {"added_rows": [{"label": f"w{i}", "x": "0", "y": "1", "role": "plain"} for i in range(30)]},
    "huge label": {"edited_rows": {"2": {"label": "ж" * 5000}}},
}


def random_example(rng: random.Random) -> Scenario:
    n = rng.randint(2, 16)
    slot = rng.randrange(n)
    action = rng.choice([i for i in range(n) if i != slot])

    def word():
        return "".join(rng.choice("abcdefgh中文éß ") for _ in range(rng.randint(1, 40))).strip() or "w"

    def value():
        return round(rng.uniform(-10, 10), rng.randint(0, 6))

    return Scenario((word(), word()), tuple(Token(word(), value(), value()) for _ in range(n - 1)), slot,
                    (Token("A" + word()[:30], value(), value()), Token("B" + word()[:30], value(), value())), action)


def random_link(rng: random.Random) -> tuple[str, str]:
    """(page url_path, query) for a fresh session: valid or hostile."""
    page = rng.choice(["", "", "scenario", "walk", "case"])
    good = encode(random_example(rng))
    sc = rng.choice([
        rng.choice(sorted(PRESETS)), good, good,
        good[: rng.randrange(len(good))],  # truncated
        good[:20] + "!*" + good[22:],  # tampered
        "v9." + good[3:],  # unknown version
        "x" * rng.choice([7000, 60_000]),  # huge
        "\u202e" + good,  # a unicode trick
    ])
    query = {"lang": rng.choice(["en", "zh", "xx"]), "sc": sc}
    if rng.random() < 0.3:
        query["depth"] = rng.choice(["5", "0", "101", "abc", "9" * 400])
    if rng.random() < 0.2:
        query[rng.choice(["zzz", "\u200bdepth", "ключ"])] = "1"
    return page, urllib.parse.urlencode(query)


class Visitor:
    """One protocol session that wanders between the Explorer and the editor."""

    def __init__(self, number: int, port: int, stats: dict, seed: int):
        self.number, self.port, self.stats = number, port, stats
        self.rng = random.Random(seed * 1000 + number)
        self.session: ProtocolSession | None = None
        self.page = ""
        self.samples: list[dict] = []
        self.values = {"residual": True, "depth": 24}

    async def open(self, page: str, query: str) -> None:
        if self.session is not None:
            await self.session.close()
        self.page = page
        self.session = ProtocolSession(self.port, query, page_name=page)
        self.stats["loads_ms"].append(await self.session.connect(timeout=TIMEOUT_S))

    def editor_state(self, edits: dict) -> WidgetState | None:
        for element in self.session.elements:
            proto = getattr(element, element.WhichOneof("type") or "", None)
            widget_id = getattr(proto, "id", "") if proto is not None else ""
            if EDITOR in widget_id:
                return WidgetState(id=widget_id, string_value=json.dumps(
                    {"edited_rows": {}, "added_rows": [], "deleted_rows": [], **edits}))
        return None

    async def act(self) -> dict:
        kind = self.rng.choice(["explorer", "valid_edit", "invalid_edit", "invalid_edit", "impossible_edit", "link"])
        sample = {"kind": kind, "ms": None, "error": None, "check": None}
        exceptions = self.session.exceptions
        try:
            if kind == "link" or (kind != "explorer" and self.page != "scenario") or (
                    kind == "explorer" and self.page != ""):
                page = "scenario" if kind.endswith("edit") else ("" if kind == "explorer" else None)
                link_page, query = random_link(self.rng)
                await self.open(link_page if page is None else page, query)
                if kind == "link":
                    sample["ms"] = self.stats["loads_ms"][-1]
                    return sample
            if kind == "explorer":
                key = self.rng.choice(["residual", "depth"])
                self.values[key] = (not self.values[key]) if key == "residual" else self.rng.randint(5, 60)
                sample["ms"] = await self.session.rerun({key: self.values[key]}, timeout=TIMEOUT_S)
            else:
                before = dict(urllib.parse.parse_qsl(self.session.query)).get("sc")
                if kind == "valid_edit":
                    row = str(self.rng.randrange(3))
                    edits = {"edited_rows": {row: self.rng.choice([
                        {"label": f"word {self.rng.randrange(10**6)}"},
                        {"x": f"{self.rng.uniform(-9.9, 9.9):.4f}"}])}}
                elif kind == "impossible_edit":  # rows that do not exist: no browser sends this
                    edits = {"edited_rows": {"40": {"x": "1"}}, "deleted_rows": [99]}
                else:
                    edits = INVALID_EDITS[self.rng.choice(sorted(INVALID_EDITS))]
                state = self.editor_state(edits)
                if state is None:
                    kinds = [e.WhichOneof("type") for e in self.session.elements]
                    sample["error"] = f"no editor on the page {self.page!r}: {kinds}"
                    return sample
                sample["ms"] = await self.session.rerun(timeout=TIMEOUT_S, extra=(state,))
                after = dict(urllib.parse.parse_qsl(self.session.query)).get("sc")
                alerts = [e.alert.format for e in self.session.elements if e.WhichOneof("type") == "alert"]
                if kind.startswith("i"):  # refused: an error shown, the last good example kept
                    sample["check"] = bool(alerts) and after == before
                else:
                    sample["check"] = after != before or after is None
                if not sample["check"]:
                    sample["detail"] = {"edits": edits, "before": before, "after": after, "alerts": list(alerts),
                                        "page": self.page}
        except TimeoutError:
            sample["error"] = "timeout"
        except Exception as error:  # noqa: BLE001 - a failed run or a closed socket: counted
            sample["error"] = f"{type(error).__name__}: {error}"[:200]
        if self.session is not None and self.session.exceptions > exceptions:
            sample["error"] = (sample["error"] or "") + " exception element"
        return sample

    async def run(self, deadline: float, pause: tuple[float, float]) -> None:
        try:
            await self.open(*random_link(self.rng))
        except Exception as error:  # noqa: BLE001 - counted, never fatal
            self.stats["load_errors"].append(f"visitor {self.number}: {type(error).__name__}: {error}"[:300])
            return
        for _ in range(100_000):
            wait = self.rng.uniform(*pause)
            if time.monotonic() + wait >= deadline:
                break
            await asyncio.sleep(wait)
            sample = await self.act()
            sample["at"] = time.monotonic()
            self.samples.append(sample)

    async def close(self) -> None:
        if self.session is not None:
            await self.session.close()


async def sample_server(pid: int, series: dict, stop: asyncio.Event) -> None:
    for _ in range(1_000_000):
        if stop.is_set():
            break
        series["t"].append(time.monotonic())
        series["rss"].append(h.rss_mb(pid))
        series["cpu"].append(h.cpu_seconds(pid))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=2.0)


async def soak(url: str, pid: int, args) -> dict:
    port = int(url.rsplit(":", 1)[1])
    stats = {"loads_ms": [], "load_errors": []}
    series = {"t": [], "rss": [], "cpu": []}
    stop = asyncio.Event()
    sampler = asyncio.create_task(sample_server(pid, series, stop))
    start = time.monotonic()
    deadline = start + args.seconds
    visitors = [Visitor(n, port, stats, args.seed) for n in range(args.sessions)]

    async def join(visitor: Visitor, delay: float) -> None:
        await asyncio.sleep(delay)
        await visitor.run(deadline, (args.pause_min, args.pause_max))

    await asyncio.gather(*(join(v, n * args.join_every) for n, v in enumerate(visitors)))
    end = time.monotonic()
    for v in visitors:
        await v.close()
    await asyncio.sleep(args.cooldown)
    stop.set()
    await sampler
    return {"start": start, "end": end, "series": series, "stats": stats,
            "samples": [s for v in visitors for s in v.samples]}


def report(run: dict, log_text: str, args) -> dict:
    samples = run["samples"]
    print(f"\n{args.sessions} sessions, {args.seconds:.0f} s, pause {args.pause_min}-{args.pause_max} s: "
          f"{len(samples)} interactions")
    print(h.HEADER)
    for kind in ("explorer", "valid_edit", "invalid_edit", "impossible_edit", "link"):
        ms = [s["ms"] for s in samples if s["kind"] == kind and s["ms"] is not None and not s["error"]]
        print(h.fmt_row(f"{kind}: request to script_finished", ms))
    errors = [s for s in samples if s["error"]]
    failed_checks = [s for s in samples if s["check"] is False]
    tracebacks = log_text.count("Traceback")
    print(f"\nerrors: {len(errors)} of {len(samples)} interactions "
          f"({sum('timeout' in s['error'] for s in errors)} timeouts, "
          f"{sum('exception element' in s['error'] for s in errors)} with an exception element); "
          f"{len(run['stats']['load_errors'])} sessions that did not load; {tracebacks} tracebacks in the server log")
    for s in errors[:5]:
        print("   ", s["kind"], s["error"])
    for s in failed_checks[:5]:
        print("    check failed:", s["kind"], json.dumps(s.get("detail"), ensure_ascii=False)[:400])
    checked = [s for s in samples if s["check"] is not None]
    print(f"behaviour: {len(checked) - len(failed_checks)} of {len(checked)} edits did what they should "
          "(valid: the link's example changed; invalid: an error shown and the example kept)")
    s = run["series"]
    t = [x - run["start"] for x in s["t"]]
    rss = [r or 0.0 for r in s["rss"]]
    during = [i for i, x in enumerate(s["t"]) if x <= run["end"]]
    half = [i for i in during if t[i] >= (run["end"] - run["start"]) / 2]
    peak = max(rss[i] for i in during)
    rate = slope_mb_per_min([t[i] for i in half], [rss[i] for i in half])
    cpu = 100 * ((s["cpu"][during[-1]] or 0) - (s["cpu"][during[0]] or 0)) / max(1e-9, s["t"][during[-1]] - s["t"][0])
    print(f"server RSS (MB): start {rss[during[0]]:.0f}, peak {peak:.0f}, end {rss[during[-1]]:.0f}, "
          f"after {args.cooldown:.0f} s idle {rss[-1]:.0f}; last half {rss[half[0]]:.0f} -> {rss[half[-1]]:.0f} "
          f"(fit {rate:+.2f} MB/min); server CPU {cpu:.0f} % of one core")
    return {"interactions": len(samples), "errors": len(errors), "tracebacks": tracebacks,
            "failed_checks": len(failed_checks), "checked": len(checked), "rss_start": rss[during[0]],
            "rss_peak": peak, "rss_end": rss[during[-1]], "rss_after": rss[-1], "rss_rate_mb_min": rate}


async def main_async(args) -> None:
    logs = Path(tempfile.mkdtemp(prefix="blockstab-soak-"))
    print(f"soaking {h.APP_ROOT} at {h.git_state(h.APP_ROOT)}")
    with h.streamlit_server("app.py", logs / "server.log") as (url, server):
        run = await soak(url, server.pid, args)
    log_text = (logs / "server.log").read_text(errors="replace")
    result = report(run, log_text, args)
    print(f"server log: {logs / 'server.log'}")
    if args.json:
        args.json.write_text(json.dumps({"summary": result, "samples": run["samples"]}, indent=1, default=str))
    ok = result["errors"] == 0 and result["tracebacks"] == 0 and result["failed_checks"] == 0
    print("PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=40)
    parser.add_argument("--seconds", type=float, default=180.0)
    parser.add_argument("--join-every", type=float, default=0.5)
    parser.add_argument("--pause-min", type=float, default=1.0)
    parser.add_argument("--pause-max", type=float, default=4.0)
    parser.add_argument("--cooldown", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    args.sessions = max(1, min(args.sessions, 200))
    args.seconds = max(10.0, min(args.seconds, 3600.0))
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
