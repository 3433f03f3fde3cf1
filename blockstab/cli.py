"""``python -m blockstab``: print the lesson's trace or its model, for re-checking the numbers (the take-home
Explorer is the app's views: ``python -m ui.take_home``)."""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys

import numpy as np

from .block import MAX_DEPTH, PLACEMENTS, StackConfig
from .lesson import ACTION_TOKEN, AXES, SCENARIOS, TOKENS, lesson_model_dict, lesson_trace, token_names
from .sublayers import NORM_KINDS

SCENARIO_CHOICES = {"confirmed": ("confirmed",), "not-confirmed": ("not_confirmed",), "both": SCENARIOS}


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.exit(2, f"blockstab: error: {message}\n")


def _depth(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"depth must be a whole number, got {text!r}") from None
    if not 1 <= value <= MAX_DEPTH:
        raise argparse.ArgumentTypeError(f"depth must be from 1 to {MAX_DEPTH}, got {value}")
    return value


def _on_off(text: str) -> bool:
    if text not in ("on", "off"):
        raise argparse.ArgumentTypeError(f"expected on or off, got {text!r}")
    return text == "on"


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m blockstab", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    trace = commands.add_parser("trace", help="every stage of every block of the lesson stack")
    trace.add_argument("--scenario", choices=tuple(SCENARIO_CHOICES), default="both")
    trace.add_argument("--depth", type=_depth, default=1)
    trace.add_argument("--residual", type=_on_off, default=True, metavar="on|off")
    trace.add_argument("--norm", choices=NORM_KINDS, default="rmsnorm")
    trace.add_argument("--placement", choices=PLACEMENTS, default="post")
    trace.add_argument("--format", choices=("table", "json", "csv"), default="table")
    trace.add_argument("--all-tokens", action="store_true", help="every token, not only the action token")
    lesson = commands.add_parser("lesson", help="the lesson model: tokens, embeddings, every weight")
    lesson.add_argument("--format", choices=("json",), default="json")
    return parser


def trace_rows(args) -> list[dict]:
    """One row per (scenario, block, stage, token) with the vector's two components."""
    cfg = StackConfig(depth=args.depth, residual=args.residual, norm=args.norm, placement=args.placement)
    scenarios = SCENARIO_CHOICES[args.scenario]
    trace = lesson_trace(cfg, scenarios)
    tokens = range(len(TOKENS)) if args.all_tokens else (ACTION_TOKEN,)
    rows = []
    for b, scenario in enumerate(scenarios):
        names = token_names(scenario)
        for block in range(cfg.depth):
            for s, stage in enumerate(cfg.stages):
                for t in tokens:
                    vector = trace.values[block, s, b, t]
                    rows.append(
                        {"scenario": scenario, "block": block + 1, "stage": stage,
                         "token": names[t], **dict(zip(AXES, map(float, vector), strict=True))}
                    )
    return rows


def _format_rows(rows: list[dict], fmt: str) -> str:
    if fmt == "json":  # strict JSON: a value that overflowed is null, not NaN/Infinity
        finite = [{k: (v if not isinstance(v, float) or np.isfinite(v) else None) for k, v in r.items()} for r in rows]
        return json.dumps(finite, indent=1, allow_nan=False)
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        return out.getvalue().rstrip("\n")
    header = f"{'scenario':<14}{'block':>6}  {'stage':<20}{'token':<14}{AXES[0]:>15}{AXES[1]:>16}"
    lines = [header, "-" * len(header)]
    for r in rows:
        lines.append(
            f"{r['scenario']:<14}{r['block']:>6}  {r['stage']:<20}{r['token']:<14}"
            f"{r[AXES[0]]:>15.4f}{r[AXES[1]]:>16.4f}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "lesson":
        print(json.dumps(lesson_model_dict(), indent=1))
        return 0
    with np.errstate(all="ignore"):
        print(_format_rows(trace_rows(args), args.format))
    return 0


if __name__ == "__main__":
    sys.exit(main())
