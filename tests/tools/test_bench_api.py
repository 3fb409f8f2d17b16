"""bench/api_bench.c builds and runs against PyPlat at a tiny size (no timing is asserted: speed
goals live in bench/). The bench checks its own results and exits non-zero on a wrong one, so a
run that passes here is a run whose figures measure working calls."""
import importlib.util
import os
import shutil
import subprocess

import pytest

from support import REPO

BENCH = REPO / "bench"


@pytest.fixture(scope="module")
def api_bench(tmp_path_factory):
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler")
    exe = tmp_path_factory.mktemp("api_bench") / "api_bench"
    r = subprocess.run([cc, "-O1", "-o", str(exe), str(BENCH / "api_bench.c"), "-lOpenCL", "-lpthread"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip("cannot build a C program against -lOpenCL: " + r.stderr[-500:])
    return exe


def test_api_bench_runs_on_pyplat_with_checked_results(api_bench, run_with_pyplat):
    r = run_with_pyplat([api_bench, "PyPlat", "0.01", "50"], env={"API_BENCH_THREADS": "1,3"}, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = {}
    for line in r.stdout.splitlines():
        name, count, us = line.split("\t")
        rows[name] = (int(count), float(us))
    for name in ("create_context", "create_queue_ooo", "create_sub_buffer", "create_kernel",
                 "create_marker_event", "retain_release_event", "get_kernel_work_group_size",
                 "set_kernel_arg_scalar", "read_nonblocking_4k", "map_unmap_4k",
                 "user_event_create_set_release"):
        assert name in rows and rows[name][1] > 0, name
    # 50 commands per thread = 10 rounds of 5; the counts say how much the wall time covers
    assert rows["mixed_stream_t1"][0] == 50
    assert rows["mixed_stream_t3"][0] == 150


def test_runner_table_takes_medians_and_keeps_rows_one_platform_skips():
    spec = importlib.util.spec_from_file_location("bench_run", BENCH / "run.py")
    run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run)
    runs = {"PyPlat": [{"a": (10, 3.0)}, {"a": (10, 1.0)}, {"a": (10, 2.0)}],
            "Portable": [{"a": (10, 1.0), "s": (5, 0.5)}] * 3}
    table = run.api_table(runs, ["PyPlat", "Portable"])
    assert [row[0] for row in table] == ["a", "s"]
    assert table[0][2]["PyPlat"] == (2.0, 1.0, 3.0)
    assert "PyPlat" not in table[1][2] and table[1][2]["Portable"][0] == 0.5
