"""Memory stays flat (issue 13 item 9): create/release loops of the most used object kinds and
kernel launches that return an event grow neither the process's resident memory nor the number
of live Python allocations. Each kind runs in a child process of its own (tools/leaks.py
--child, through PyPlat's C entries in-process: tests/support/capi.py), so that other tests' memory does
not disturb the figures.

Sensors and thresholds: the done-when is at most 1 kB of resident memory per 1,000 iterations.
A leak of native memory loses at least one allocator chunk (32 bytes) each time it happens, a
leak of Python objects at least one block; so
- RSS: after a short warm-up, growth over the measured iterations must stay under
  RSS_KB_PER_1000 (the RSS moves in 4 kB pages and the allocator settles for a while: a little
  room over the done-when; a handle never freed costs 32-48 kB per 1,000); program builds,
  whose allocator settles slowly, count the smallest of 3 rounds against 4 times that;
- Python: tracemalloc counts the blocks still live (after a collection) across a second run of
  iterations; at most BLOCKS_PER_ITERATION per iteration may stay (a fixed few from warming
  caches: one leaked object per iteration is 20 times that).
"""
import json
import os
import subprocess
import sys

import pytest

from support import REPO, TESTS

TOOL = REPO / "tools" / "leaks.py"
RSS_KB_PER_1000 = 2.0
BLOCKS_PER_ITERATION = 0.05

# kind: (warm-up, iterations measured by RSS, iterations counted by tracemalloc, RSS limit)
KINDS = {
    "context": (1000, 20000, 10000, RSS_KB_PER_1000),
    "buffer": (1000, 20000, 10000, RSS_KB_PER_1000),
    "user_event": (1000, 20000, 10000, RSS_KB_PER_1000),
    "kernel": (1000, 20000, 10000, RSS_KB_PER_1000),
    "launch_event": (2000, 40000, 20000, RSS_KB_PER_1000),
    "launch_event_info": (1000, 20000, 10000, RSS_KB_PER_1000),
}
# Program builds from a source whose build is cached (each links its code into a JIT engine of
# its own): the allocator takes a few thousand builds to settle and moves the RSS by a few pages
# now and then, so the smallest of 3 rounds is what counts (a leak shows in every round).
PROGRAM = (1500, 700, 1000, 4 * RSS_KB_PER_1000)


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    """A compile cache of the module's own (other tests may have turned the cache off in
    os.environ): program builds below are builds of a cached source."""
    return str(tmp_path_factory.mktemp("leaks-cache"))


def measure(kind, warmup, iterations, traced, cache_dir, rounds=1):
    env = dict(os.environ, PYPLAT_CACHE_DIR=cache_dir)
    env.pop("PYTHONPATH", None)
    r = subprocess.run([sys.executable, str(TOOL), "--child", kind, "--api", "capi", "--platform", "PyPlat",
                        f"--warmup={warmup}", f"--iterations={iterations}", f"--rounds={rounds}",
                        f"--traced={traced}"], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0 and r.stdout.strip(), r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_memory_is_flat(kind, cache_dir):
    warmup, iterations, traced, limit = KINDS[kind]
    res = measure(kind, warmup, iterations, traced, cache_dir)
    check(kind, res["kb_per_1000"], res["python_blocks_per_1000"] / 1000, limit)


def test_memory_is_flat_building_programs(cache_dir):
    warmup, iterations, traced, limit = PROGRAM
    scale = 5                                          # tools/leaks.py runs slow kinds less
    res = measure("program_source", warmup * scale, iterations * scale, traced, cache_dir, rounds=3)
    check("program_source", res["min_round_kb_per_1000"], res["python_blocks_per_1000"] / 1000, limit)


def check(kind, rss, blocks, limit):
    assert rss <= limit, f"{kind}: resident memory grows {rss:.2f} kB per 1,000 iterations"
    assert blocks <= BLOCKS_PER_ITERATION, f"{kind}: {blocks:.3f} Python blocks stay per iteration"


def test_released_handles_read_dead_and_their_memory_is_recycled():
    """The quarantine keeps a released handle's memory readable as dead while 8,192 others are
    released after it; the memory is then used again (the loop above stays flat from the start
    because of it). A fresh process: its quarantine starts full of never-used blocks."""
    code = r"""
import ctypes, sys
sys.path.insert(0, sys.argv[1])
from support.capi import CL
from support.clobjects import make_context
from pyplat.api import handles
class H(ctypes.Structure):
    _fields_ = [("dispatch", ctypes.c_void_p), ("magic", ctypes.c_uint32), ("kind", ctypes.c_uint32),
                ("serial", ctypes.c_uint64)]
ctx, dev = make_context()
err = ctypes.c_int32()
first = CL.clCreateBuffer(ctx, 1, 64, 0, ctypes.addressof(err))
CL.clReleaseMemObject(first)
seen = set()
for i in range(8191):
    b = CL.clCreateBuffer(ctx, 1, 64, 0, ctypes.addressof(err))
    seen.add(b)
    CL.clReleaseMemObject(b)
    assert H.from_address(first).magic == handles.DEAD
assert first not in seen                       # not reused while in quarantine
again = set()
for i in range(9000):
    b = CL.clCreateBuffer(ctx, 1, 64, 0, ctypes.addressof(err))
    again.add(b)
    CL.clReleaseMemObject(b)
assert first in again                          # recycled once out of quarantine
assert len(seen | again) < 8192 + 2 * 1024, len(seen | again)   # no new memory per handle
print("ok")
"""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    r = subprocess.run([sys.executable, "-c", code, str(TESTS)],
                       capture_output=True, text=True, timeout=120, env=env, cwd="/")
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-3000:]


def test_optimising_a_module_frees_its_pipeline():
    """Every compile builds an O3 pipeline (a pass builder and a module pass manager); it must
    be freed with the compile (llvmlite 0.50 never frees a ModulePassManager itself: 80 kB per
    program compiled, so uncached builds grew without bound). Compiled here straight through
    the JIT layer, in a child process; the pass builder's instrumentation callbacks (~1.5 kB,
    llvmlite's) are what may stay."""
    code = r"""
import os
from pyplat.compiler import jit
IR = '''
define void @k(ptr %a, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%j, %loop]
  %p = getelementptr float, ptr %a, i64 %i
  %v = load float, ptr %p
  %w = fmul float %v, 2.0
  store float %w, ptr %p
  %j = add i64 %i, 1
  %c = icmp ult i64 %j, %n
  br i1 %c, label %loop, label %done
done:
  ret void
}
'''
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1024
for i in range(50):
    jit.compile_object(IR, 3)
r0 = rss()
for i in range(300):
    jit.compile_object(IR, 3, unroll=i % 2 == 0)
print((rss() - r0) / 300)
"""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env, cwd="/")
    assert r.returncode == 0, r.stderr[-3000:]
    per_compile = float(r.stdout.strip().splitlines()[-1])
    assert per_compile < 8, f"{per_compile:.1f} kB stay per module optimised"
