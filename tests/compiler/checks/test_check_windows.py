"""PYPLAT_CHECK=races: `__global` arguments whose race checks are left out because each group
stays in a window of its own and a group's work-items stay apart (compiler/checker/windows.py),
the pattern of pyopencl's scan. Which arguments get the proof; that races close to it are still
found, by the full version, where the proof does not hold or the launch fails its conditions;
and that the proven kernel computes what it should."""
import os
import subprocess
import sys
import textwrap

import pytest

from support.kernel_check import PRELUDE, findings

pytest.importorskip("pyopencl")

SOURCE = r"""
#define WG 16
#define K 4
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void units(__global int *partial, __global int *last, int n, int size) {
    const int begin = size * get_group_id(0);
    const int end = min(begin + size, n);
    int base = begin;
    for (; base + K * WG <= end; base += K * WG) {          /* whole units */
        barrier(CLK_GLOBAL_MEM_FENCE);          /* (as in pyopencl's scan: the writes have a */
        for (int k = 0; k < K; k++) {           /* region of their own, apart from the read) */
            const int o = k * WG + get_local_id(0);
            partial[base + o] = o;
        }
        barrier(CLK_GLOBAL_MEM_FENCE);
    }
    if (base < end) {                                       /* the last, partial unit */
        barrier(CLK_GLOBAL_MEM_FENCE);
        for (int k = 0; k < K; k++) {
            const int o = k * WG + get_local_id(0);
            if (base + o < end)
                partial[base + o] = o;
        }
        barrier(CLK_GLOBAL_MEM_FENCE);
    }
    if (get_local_id(0) == 0)                               /* (work-item 0 of each group) */
        last[get_group_id(0)] = partial[end - 1];
}
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void group_stride(__global int *out, __global const int *in, int n, int size) {
    const int begin = size * get_group_id(0);
    const int end = min(begin + size, n);
    for (int i = begin + get_local_id(0); i < end; i += WG)   /* pyopencl's scan_final_update */
        out[i] = in[i] + 1;
}
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void half_stride(__global int *out, int n, int size) {
    const int begin = size * get_group_id(0);
    const int end = min(begin + size, n);
    for (int i = begin + get_local_id(0); i < end; i += WG / 2)   /* lid 0's 2nd is lid 8's 1st */
        out[i] = (int)get_local_id(0);
}
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void past_the_unit(__global int *partial, int n, int size) {
    const int begin = size * get_group_id(0);
    const int end = min(begin + size, n);
    for (int base = begin; base + K * WG <= end; base += K * WG)
        for (int k = 0; k <= K; k++)                        /* one row past the unit */
            partial[base + k * WG + get_local_id(0)] = k;
}
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void half_rows(__global int *partial, int n, int size) {
    const int begin = size * get_group_id(0);
    const int end = min(begin + size, n);
    for (int base = begin; base + K * WG <= end; base += K * WG)
        for (int k = 0; k < 2 * K - 1; k++)                 /* rows of WG / 2: items overlap */
            partial[base + k * (WG / 2) + get_local_id(0)] = k;
}
"""


def test_which_arguments_get_a_window_proof(monkeypatch):
    monkeypatch.setenv("PYPLAT_CHECK", "bounds,races")
    from pyplat.compiler import build
    from pyplat.compiler.checker import windows as check_windows
    seen = {}
    real = check_windows.proofs

    def spy(table, k):
        seen[k.name] = real(table, k)
        return seen[k.name]
    monkeypatch.setattr(check_windows, "proofs", spy)
    r = build(SOURCE, use_cache=False)
    assert r.ok, r.log
    units = seen["units"]
    # partial: windows of `size` ints per group (one of the ways the launch tests: size >= 1 and
    # n - 1 - size * g >= 0 for every group g, from work-item 0's read of partial[end - 1]);
    # last: check_private's linear form (get_group_id(0) for work-item 0)
    assert sorted(units) == [0, 1], units
    assert units[0].window == {(("arg", 3),): 4}, units[0].window
    assert units[0].linear == {("grp", 0): {(("arg", 3),): 4}}, units[0].linear
    assert [{None: {(): -4, (("arg", 3),): 4}}, {None: {(): -4, (("arg", 2),): 4}, ("grp", 0): {(("arg", 3),): -4}}] \
        in units[0].conditions, units[0].conditions
    assert units[1].conditions == () and isinstance(units[1].window, int)    # (a linear form's)
    assert seen["past_the_unit"] == {} and seen["half_rows"] == {} and seen["half_stride"] == {}, seen
    stride = seen["group_stride"]               # (out; in is read-only, and proven too)
    assert sorted(stride) == [0, 1] and stride[0].window == {(("arg", 3),): 4} and [] in stride[0].conditions
    assert "__pyplat_wg_units.fast" in r.llvm_ir


def run(body):
    # (one worker: groups one after the other, so that each race is seen whatever the timing)
    env = dict(os.environ, PYPLAT_CHECK="bounds,races", PYPLAT_CACHE_DIR="off", PYPLAT_WORKERS="1")
    p = subprocess.run([sys.executable, "-c", PRELUDE + "P = cl.Program(ctx, %r).build()\n" % SOURCE
                        + textwrap.dedent(body)], capture_output=True, text=True, timeout=300, env=env, cwd="/")
    assert p.returncode == 0, p.stderr[-3000:]
    return p


def test_the_proven_kernel_computes_its_values_without_findings():
    p = run('''
        n, size = 1000, 320
        partial = cl.Buffer(ctx, mf.READ_WRITE, 4 * n)
        last = cl.Buffer(ctx, mf.READ_WRITE, 4 * 4)
        print("status", status(P.units(q, (64,), (16,), partial, last, np.int32(n), np.int32(size))))
        out = cl.Buffer(ctx, mf.READ_WRITE, 4 * n)
        print("stride", status(P.group_stride(q, (64,), (16,), out, partial, np.int32(n), np.int32(size))))
        s = np.empty(n, np.int32); cl.enqueue_copy(q, s, out)
        r = np.empty(n, np.int32); cl.enqueue_copy(q, r, partial)
        want = (np.arange(n) % size) % 64
        print("values", bool((r == want).all()), bool((s == want + 1).all()))
        l = np.empty(4, np.int32); cl.enqueue_copy(q, l, last)
        print("last", ",".join(str(int(x)) for x in l))
    ''')
    assert findings(p.stderr) == [], p.stderr
    assert "status 0" in p.stdout and "stride 0" in p.stdout and "values True True" in p.stdout, p.stdout
    # (group 3's window is [960, 1000): its last, partial unit holds 40 values)
    assert "last 63,63,63,39" in p.stdout, p.stdout


@pytest.mark.parametrize("launch,expected", [
    # a group past n reads partial[n - 1], which group 0 writes: the launch's condition
    # n - 1 - size * g >= 0 fails, and the full version finds the race
    ("P.units(q, (32,), (16,), partial, last, np.int32(40), np.int32(64))",
     "read after another work-item's write of 4 bytes at offset 156 of __global argument 'partial'"),
    ("P.past_the_unit(q, (32,), (16,), partial, np.int32(128), np.int32(64))",
     "write after another work-item's write of 4 bytes at offset 316 of __global argument 'partial' (4096 bytes) "
     "(other work-item: work-group linear id 0, local linear id 15)"),
    ("P.half_stride(q, (16,), (16,), partial, np.int32(64), np.int32(64))",
     "write after another work-item's write of 4 bytes at offset 252 of __global argument 'out' (4096 bytes) "
     "(other work-item: local linear id 7 of the same work-group, no barrier between)"),
    ("P.half_rows(q, (16,), (16,), partial, np.int32(64), np.int32(64))",
     "write after another work-item's write of 4 bytes at offset 220 of __global argument 'partial' (4096 bytes) "
     "(other work-item: local linear id 7 of the same work-group, no barrier between)"),
])
def test_races_the_windows_do_not_cover_are_found(launch, expected):
    p = run('''
        partial = cl.Buffer(ctx, mf.READ_WRITE, 4 * 1024)
        last = cl.Buffer(ctx, mf.READ_WRITE, 4 * 64)
        print("status", status(%s))
    ''' % launch)
    found = findings(p.stderr)
    assert len(found) == 1 and "data race" in found[0] and expected in found[0], p.stderr
