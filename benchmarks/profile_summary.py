"""Summarise a py-spy ``--format raw`` profile (collapsed stacks) of the server by function.

Record one with ``browser_latency.py --only widgets --profile DIR`` (needs ``pip install py-spy``),
then: ``.venv/bin/python -m benchmarks.profile_summary DIR/ours-widgets.txt``.
Prints the share of busy samples spent inside (inclusive) and directly in (self) each function,
and the share per group of code (the app, Plotly, Streamlit, protobuf, NumPy, ...).
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

FRAME = re.compile(r"^(?P<func>.*?) \((?P<file>[^()]*?)(?::\d+)?\)$")
GROUPS = [  # first match wins, checked from the innermost frame outwards for "self" time
    ("app: ui/views/ (figures)", "ui/views/"),
    ("app: blockstab engine", "blockstab/"),
    ("app: pages and other ui", "/work/main/"),
    ("plotly", "plotly/"),
    ("_plotly_utils (validators, JSON)", "_plotly_utils/"),
    ("protobuf", "google/protobuf"),
    ("numpy", "numpy/"),
    ("json", "json/"),
    ("tornado / asyncio", "tornado/"),
    ("asyncio", "asyncio/"),
    ("streamlit", "streamlit/"),
]


def parse(path: Path) -> list[tuple[list[tuple[str, str]], int]]:
    stacks = []
    for line in path.read_text(errors="replace").splitlines():
        head, _, count = line.rpartition(" ")
        if not head or not count.isdigit():
            continue
        frames = []
        for part in head.split(";"):
            m = FRAME.match(part.strip())
            if m:
                frames.append((m["func"], m["file"]))
        stacks.append((frames, int(count)))
    return stacks


def group_of(file: str) -> str:
    for name, needle in GROUPS:
        if needle in file:
            return name
    return "other"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("profile", type=Path)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    stacks = parse(args.profile)
    total = sum(c for _, c in stacks) or 1
    inclusive: Counter = Counter()
    own: Counter = Counter()
    groups: Counter = Counter()
    for frames, count in stacks:
        seen = set()
        for func, file in frames:
            key = f"{func} ({Path(file).parent.name}/{Path(file).name})"
            if key not in seen:
                inclusive[key] += count
                seen.add(key)
        if frames:
            func, file = frames[-1]
            own[f"{func} ({Path(file).parent.name}/{Path(file).name})"] += count
            # self time charged to the innermost frame that belongs to a known group
            groups[next((group_of(f) for _, f in reversed(frames) if group_of(f) != "other"), "other")] += count
    print(f"{total} busy samples\n\nby group of code (self time, innermost known frame)")
    for name, count in groups.most_common():
        print(f"  {100 * count / total:6.1f} %  {name}")
    print(f"\ninclusive (time inside the function, callees included), top {args.top}")
    for name, count in inclusive.most_common(args.top):
        print(f"  {100 * count / total:6.1f} %  {name}")
    print(f"\nself (time in the function's own code), top {args.top}")
    for name, count in own.most_common(args.top):
        print(f"  {100 * count / total:6.1f} %  {name}")


if __name__ == "__main__":
    main()
