"""The benchmarks' CPU accounting (benchmarks/harness.py), on real processes: a server's worker that ends
between two readings keeps its time in the server's."""

import subprocess
import sys

from benchmarks import harness as h

# A parent that runs a child burning about half a second of CPU, waits for it, then waits for its stdin.
PARENT = ("import subprocess, sys\n"
          "subprocess.run([sys.executable, '-c', 'sum(range(30_000_000))'])\n"
          "print('child ended', flush=True)\n"
          "sys.stdin.read()\n")


def test_a_process_trees_cpu_keeps_the_time_of_a_child_that_ended():
    with subprocess.Popen([sys.executable, "-c", PARENT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          text=True) as parent:
        try:
            assert parent.stdout.readline() == "child ended\n"
            alive_only = sum(h.cpu_seconds(p) or 0.0 for p in (parent.pid, *h.descendants(parent.pid)))
            with_reaped = h.tree_cpu_seconds(parent.pid)
            assert with_reaped >= 0.2 and with_reaped - alive_only >= 0.2  # the child's time, counted
        finally:
            parent.stdin.close()
