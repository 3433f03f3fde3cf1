"""Where a command's CPU goes, by kind of process: run it (e.g. the test suite) and sample /proc.

    python -m benchmarks.suite_cpu -- bash scripts/test.sh

Every process started while the command runs (its own and any other's: run it on a quiet machine) is
sampled each ``--every`` seconds (a process that lives shorter than that is missed); its CPU time is
counted under the kind its command line names. Prints
the wall time, the machine's busy CPU seconds and the CPU seconds of each kind. Linux only.
"""

import argparse
import collections
import os
import subprocess
import threading
import time

TICKS = os.sysconf("SC_CLK_TCK")
KINDS = (("chromium", "Chromium"), ("forkserver", "worker processes (tens built ahead, Depth lab runs)"),
         ("-m server", "app servers"), ("serve.py", "app servers"), ("execnet", "pytest workers"),
         ("exec(eval(sys.stdin", "pytest workers"),
         ("playwright", "Playwright's driver"), ("pytest", "pytest"))


def kind(command: str) -> str:
    return next((name for part, name in KINDS if part in command), "other")


def busy_seconds() -> float:
    """The whole machine's busy CPU time so far (every core)."""
    with open("/proc/stat") as f:
        user, nice, system, _idle, _iowait, irq, softirq, steal = map(int, f.readline().split()[1:9])
    return (user + nice + system + irq + softirq + steal) / TICKS


def sample(seen: dict, started: set) -> None:
    """Each process's CPU ticks now, under the kind it had when first seen with a command line."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                command = f.read().replace(b"\0", b" ").decode(errors="replace")
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:  # it ended meanwhile
            continue
        key = (pid, fields[19])  # a pid and its start time: one process
        if key in started:
            continue  # it ran before the command did
        named = seen.get(key, ("", 0))[0] or (kind(command) if command.strip() else "")
        seen[key] = (named, int(fields[11]) + int(fields[12]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=float, default=0.5, help="seconds between samples")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    before: dict = {}
    sample(before, set())
    started, seen, done = set(before), {}, threading.Event()

    def sampler():
        while not done.wait(args.every):
            sample(seen, started)

    thread = threading.Thread(target=sampler, daemon=True)
    wall, busy = time.monotonic(), busy_seconds()
    thread.start()
    code = subprocess.call(command)
    done.set()
    thread.join()
    sample(seen, started)
    wall, busy = time.monotonic() - wall, busy_seconds() - busy
    by_kind = collections.Counter()
    for named, ticks in seen.values():
        by_kind[named or "other"] += ticks / TICKS
    print(f"exit {code}; wall {wall:.0f} s; machine busy {busy:.0f} CPU-s ({busy / wall / os.cpu_count():.0%} of "
          f"{os.cpu_count()} cores)")
    for name, seconds in by_kind.most_common():
        print(f"{seconds:8.0f} CPU-s  {seconds / busy:4.0%}  {name}")
    raise SystemExit(code)


if __name__ == "__main__":
    main()
