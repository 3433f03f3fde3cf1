"""Imported by a probe process and preloaded in its fork server (tests/app/test_lab_page.py): every
Depth-lab run appends where it computes (process, niceness, BLAS threads) to $LAB_PROBE_FILE."""

import json
import os

from threadpoolctl import threadpool_info

from blockstab import lab

curves = lab.depth_curves


def watched(*args, **kwargs):
    blas = sorted({pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"})
    with open(os.environ["LAB_PROBE_FILE"], "a") as record:
        record.write(json.dumps({"pid": os.getpid(), "nice": os.nice(0), "blas": blas}) + "\n")
    return curves(*args, **kwargs)


lab.depth_curves = watched
