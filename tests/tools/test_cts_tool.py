"""tools/cts.py reads the Khronos CTS harness's output right: a fake binary prints what
test_common/harness/testHarness.cpp prints, then passes, crashes or hangs."""
import importlib.util
import json
import os
import stat

import pytest

from support import REPO

TOOL = REPO / "tools" / "cts.py"
if not TOOL.exists():
    pytest.skip("no tools/cts.py next to the tests", allow_module_level=True)
spec = importlib.util.spec_from_file_location("cts_tool", TOOL)
cts = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cts)

HARNESS_LOG = """Initializing random seed to 0.
Compute Device Name = X
first...
first passed
second...
checking sizes
ERROR: Data sample 3 does not validate! Expected 1, got 2
second FAILED
third...
third test not supported
fourth skipped (requires at least OpenCL version 2.0, but the device reports OpenCL version 1.2)
FAILED 1 of 4 tests.
"""


def fake_binary(tmp_path, name, text, then):
    path = tmp_path / name
    path.write_text("#!/bin/sh\ncat <<'EOF'\n%sEOF\n%s\n" % (text, then))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_parse_log_reads_every_kind_of_subtest_line():
    subtests, order, excerpts, summary = cts.parse_log(HARNESS_LOG + "fifth...\nworking\n")
    assert subtests == {"first": "pass", "second": "fail", "third": "skip", "fourth": "skip",
                        "fifth": "unfinished"}
    assert order == ["first", "second", "third", "fourth", "fifth"]
    assert excerpts["second"] == ["checking sizes", "ERROR: Data sample 3 does not validate! Expected 1, got 2"]
    assert excerpts["fifth"] == ["working"]
    assert summary == ("FAILED", 1, 4)


@pytest.mark.parametrize("then,outcome,last", [
    ("exit 1", "ok", None),
    ("echo fifth...; kill -SEGV $$", "crash (SIGSEGV)", "crash"),
    ("echo fifth...; sleep 30", "timeout", "timeout"),
])
def test_run_one_records_results_crashes_and_timeouts(tmp_path, then, outcome, last):
    binary = fake_binary(tmp_path, "test_fake", HARNESS_LOG, then)
    r = cts.run_one("pocl", str(tmp_path), "test_fake", binary, [], 3, str(tmp_path / "logs"))
    assert r["outcome"] == outcome
    assert r["subtests"]["second"] == "fail"
    assert r["failures"]["second"][0].startswith("ERROR: Data sample 3")
    if last is None:
        assert r["counts"] == {"passed": 1, "failed": 1, "skipped": 2}
    else:
        assert r["subtests"]["fifth"] == last
        assert r["counts"] == {"passed": 1, "failed": 2, "skipped": 2}
    assert (tmp_path / "logs" / "test_fake.log").read_text().startswith("Initializing")


def test_the_harness_results_file_wins_and_the_table_compares_platforms(tmp_path):
    # the harness writes its own verdicts where CL_CONFORMANCE_RESULTS_FILENAME points
    write = ('printf \'{"cmd": "x", "results": {"first": "pass", "second": "fail", "third": "skip", '
             '"fourth": "skip", "sixth": "fail"}}\' > "$CL_CONFORMANCE_RESULTS_FILENAME"')
    binary = fake_binary(tmp_path, "test_fake", HARNESS_LOG, write)
    mine = cts.run_one("pyplat", str(tmp_path), "test_fake", binary, ["-w"], 10, str(tmp_path / "a"))
    assert mine["results_file"] and mine["subtests"]["sixth"] == "fail"
    theirs = json.loads(json.dumps(mine))
    theirs["subtests"].update(second="pass", sixth="fail")
    theirs["counts"] = {"passed": 2, "failed": 1, "skipped": 2}
    md = cts.markdown({"pyplat": {"test_fake": mine}, "pocl": {"test_fake": theirs}})
    assert "| test_fake | 1 / 2 / 2" in md and "| 2 / 1 / 2" in md
    failing = md.split("pass on PoCL:")[1]
    assert "test_fake second (fail)" in failing and "sixth" not in failing
    assert "./test_fake -w second" in failing and "ERROR: Data sample 3" in failing


def test_main_writes_json_and_markdown_and_fails_on_failures(tmp_path, monkeypatch):
    binary = fake_binary(tmp_path, "test_fake", HARNESS_LOG, "exit 1")
    monkeypatch.setattr(cts, "vendors_dir", lambda platform, tmp: str(tmp_path))
    out = tmp_path / "out"
    rc = cts.main(["--cts-dir", str(tmp_path), "--platform", "pocl", "--binaries", "test_fake,test_none",
                   "--out", str(out)])
    assert rc == 1
    data = json.loads((out / "cts.json").read_text())
    assert data["pocl"]["test_fake"]["counts"]["failed"] == 1
    assert "| test_fake |" in (out / "cts.md").read_text()
    assert os.path.exists(out / "logs" / "pocl" / "test_fake.log")
