"""PYPLAT_CHECK=bounds: accesses through __global, __constant and __local pointers checked in
the compiled kernel (docs/tools.md, "PYPLAT_CHECK"). A catalogue of buggy kernels, each found
with the right kind, kernel, work-item, source line and object; the bad write does not happen,
the command's event ends with CL_OUT_OF_RESOURCES, the host goes on. Correct kernels (barriers,
tiles, pyopencl's array operations) report nothing.

Every case runs in a child process with the variable set (and no compiled-program cache, so
the checked build is made here)."""
import re

import pytest

pytest.importorskip("pyopencl")

from support.kernel_check import CASES, CATALOGUE, findings, line_of, run_script  # noqa: E402


@pytest.mark.parametrize("kernel", sorted(CASES))
def test_each_buggy_kernel_is_found_at_its_line_and_the_host_goes_on(kernel):
    launch, pieces, access, *kinds = CASES[kernel]
    p = run_script('''
        # out: the first N ints of a larger buffer full of sentinels, so that a write past it shows
        whole = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.full(2 * N, -7, np.int32))
        out = whole.get_sub_region(0, 4 * N)
        inp = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.arange(N, dtype=np.int32))
        %s
        print("status", status(ev))
        after = np.empty(2 * N, np.int32)
        cl.enqueue_copy(q, after, whole)
        print("past the end", int(after[N]), int(after[2 * N - 1]))
        ok = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.zeros(N, np.int32))
        print("correct", status(prg.add_one(q, (N,), (64,), ok)))
        res = np.empty(N, np.int32)
        cl.enqueue_copy(q, res, ok)
        print("sum", int(res.sum()))
    ''' % launch, {"PYPLAT_CHECK": kinds[0]} if kinds else None)
    out = p.stdout.split("\n")
    assert "status -5" in out, p.stdout            # CL_OUT_OF_RESOURCES
    assert "past the end -7 -7" in out             # the bad write did not happen
    assert "correct 0" in out and f"sum {256}" in out
    found = findings(p.stderr)
    assert len(found) == 1, p.stderr
    line = found[0]
    assert f"kernel '{kernel}'" in line
    for piece in pieces:
        assert piece in line, line
    m = re.search(r"at <source>:(\d+):(\d+)$", line)
    assert m and int(m.group(1)) == line_of(access), (line, line_of(access))


@pytest.mark.parametrize("ending", ["exit", "os._exit"])
def test_a_finding_is_out_when_the_wait_on_its_command_returns(ending):
    """A program that waits for a failed launch and ends at once (even without Python's exit
    handlers) has the finding on stderr before the wait returns: the wait reports failures
    through the Python entry, which runs the command's clean-up (the finding's hook) first."""
    p = run_script('''
        import os, sys
        out = cl.Buffer(ctx, mf.READ_WRITE, 4 * N)
        inp = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.arange(N, dtype=np.int32))
        ev = prg.read_past_global(q, (N,), (64,), out, inp)
        try:
            cl.wait_for_events([ev])
        except cl.RuntimeError as e:
            print("wait returned", "EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST" in str(e), file=sys.stderr, flush=True)
        if sys.argv[-1] == "os._exit":
            os._exit(0)
    '''.replace("sys.argv[-1]", repr(ending)))
    lines = p.stderr.split("\n")
    at = lines.index("wait returned True")
    assert [i for i, line in enumerate(lines) if line.startswith("pyplat: check: ")] == [at - 1], p.stderr


def test_a_load_outside_yields_zero_and_the_rest_of_the_launch_runs():
    p = run_script('''
        out = cl.Buffer(ctx, mf.READ_WRITE, 4 * N)
        inp = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.arange(N, dtype=np.int32))
        print("status", status(prg.read_past_global(q, (N,), (64,), out, inp)))
        res = np.empty(N, np.int32)
        cl.enqueue_copy(q, res, out)
        print("values", int(res[0]), int(res[N - 2]), int(res[N - 1]))
    ''')
    assert "status -5" in p.stdout and "values 1 255 0" in p.stdout, p.stdout


CORRECT = r"""
__kernel void reduce(__global const float *in, __global float *out, __local float *part) {
    size_t l = get_local_id(0), n = get_local_size(0);
    part[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t s = n / 2; s > 0; s /= 2) {
        if (l < s) part[l] += part[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) out[get_group_id(0)] = part[0];
}
#define T 16
__kernel void transpose(__global float *dst, __global const float *src, int w, int h) {
    __local float tile[T][T + 1];
    int x = get_global_id(0), y = get_global_id(1);
    int lx = get_local_id(0), ly = get_local_id(1);
    tile[ly][lx] = src[y * w + x];
    barrier(CLK_LOCAL_MEM_FENCE);
    int tx = get_group_id(1) * T + lx, ty = get_group_id(0) * T + ly;
    dst[ty * h + tx] = tile[lx][ly];
}
typedef struct { float x, y; int tag; } item;
constant float weights[3] = {0.25f, 0.5f, 0.25f};
float smooth(__global const float *p, int i, int n) {
    float s = 0.0f;
    for (int k = -1; k <= 1; k++) {
        int j = clamp(i + k, 0, n - 1);
        s += weights[k + 1] * p[j];
    }
    return s;
}
__kernel void structs(__global item *items, __global float4 *v, __global const float *p, int n) {
    int i = get_global_id(0);
    __global item *it = items + i;
    it->x = smooth(p, i, n);
    items[i].tag = i;
    v[i] = vload4(0, p + 4 * (i % (n / 4))) + (float4)(it->x);
}
"""


@pytest.mark.parametrize("kinds", ["bounds,races", "all"])
def test_correct_kernels_report_nothing(kinds):
    """(pyopencl's scan reads slots of a partial last unit it never wrote, and never uses what
    it read there: uninit follows those values and finds no use.)"""
    p = run_script('''
        P = cl.Program(ctx, %r).build()
        a = np.random.default_rng(1).random(1024).astype(np.float32)
        A = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
        R = cl.Buffer(ctx, mf.READ_WRITE, 4 * 16)
        print("reduce", status(P.reduce(q, (1024,), (64,), A, R, cl.LocalMemory(4 * 64))))
        r = np.empty(16, np.float32); cl.enqueue_copy(q, r, R)
        print("reduce ok", bool(np.allclose(r, a.reshape(16, 64).sum(1), rtol=1e-4)))
        w, h = 64, 32
        m = np.arange(w * h, dtype=np.float32).reshape(h, w)
        S = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=m)
        D = cl.Buffer(ctx, mf.READ_WRITE, m.nbytes)
        print("transpose", status(P.transpose(q, (w, h), (16, 16), D, S, np.int32(w), np.int32(h))))
        t = np.empty((w, h), np.float32); cl.enqueue_copy(q, t, D)
        print("transpose ok", bool((t == m.T).all()))
        items = cl.Buffer(ctx, mf.READ_WRITE, 12 * 256)
        V = cl.Buffer(ctx, mf.READ_WRITE, 16 * 256)
        print("structs", status(P.structs(q, (256,), None, items, V, A, np.int32(256))))
        import pyopencl.array as cla
        x = cla.to_device(q, a)
        y = (2 * x + 1).get()
        print("array ok", bool(np.allclose(y, 2 * a + 1)), bool(abs(cla.sum(x).get() - a.sum()) < 1e-2),
              bool(np.allclose(cla.cumsum(x).get(), np.cumsum(a), rtol=1e-3)))
    ''' % CORRECT, {"PYPLAT_CHECK": kinds})
    out = p.stdout.split("\n")
    for line in ("reduce 0", "reduce ok True", "transpose 0", "transpose ok True", "structs 0",
                 "array ok True True True"):
        assert line in out, p.stdout
    assert findings(p.stderr) == [], p.stderr


def test_checked_kernels_are_another_cache_entry(tmp_path):
    """A program built without checks and then with them (same cache) gets each its own code."""
    body = '''
        out = cl.Buffer(ctx, mf.READ_WRITE, 8 * N).get_sub_region(0, 4 * N)
        print("status", status(prg.write_past_global(q, (N,), (64,), out)))
    '''
    cache = {"PYPLAT_CACHE_DIR": str(tmp_path)}
    plain = run_script(body, dict(cache, PYPLAT_CHECK=""))
    checked = run_script(body, cache)
    assert findings(plain.stderr) == [] and len(findings(checked.stderr)) == 1, checked.stderr
    assert "status -5" in checked.stdout


GLOBAL_RACES = r"""
__kernel void bytes(__global char *out) { out[get_global_id(0)] = (char)get_global_id(0); }
__kernel void neighbours(__global int *a) {
    size_t l = get_local_id(0);
    a[l] = (int)l;
    barrier(CLK_GLOBAL_MEM_FENCE);
    int v = a[(l + 1) % get_local_size(0)];
    barrier(CLK_GLOBAL_MEM_FENCE);
    a[l] = v;
}
__kernel void cross_group(__global int *a) {
    size_t i = get_global_id(0);
    a[i] = 1;
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (get_group_id(0) == 2 && get_local_id(0) == 5) a[i] = a[3];
}
__kernel void one_writer(__global int *a, __global const int *who) {
    if (get_global_id(0) == (size_t)who[0]) a[0] += 1;
}
__kernel void counted(__global int *a) { atomic_inc(a); atomic_add(a + 1, 2); }
__kernel void scatter(__global float *b, __global const int *i, __global const float *c) {
    size_t k = get_global_id(0);
    b[i[k]] = c[i[k]];            /* repeated indices, equal values: the same outcome in any order */
}
__kernel void same_item(__global int *a) {
    size_t i = get_global_id(0);
    a[i] = 1;
    a[i] += a[i];
}
"""


def test_global_races_found_and_not_invented():
    """PYPLAT_CHECK=races on __global memory: byte-per-work-item writes, a group ordered by
    barriers, atomics, one work-item's own accesses, writes of the value already there and the
    same accesses from two launches (of one kernel object, one check record) are no race; a
    read of another group's write is."""
    p = run_script('''
        G = cl.Program(ctx, %r).build()
        c = cl.Buffer(ctx, mf.READ_WRITE, 1024)
        print("bytes", status(G.bytes(q, (1024,), (64,), c)))
        a = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.zeros(N, np.int32))
        print("neighbours", status(G.neighbours(q, (64,), (64,), a)))
        print("same_item", status(G.same_item(q, (N,), (64,), a)))
        cl.enqueue_fill_buffer(q, a, np.int32(0), 0, 4 * N)
        print("counted", status(G.counted(q, (N,), (64,), a)))
        idx = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=(np.arange(N) %% 7).astype(np.int32))
        print("scatter", status(G.scatter(q, (N,), (64,), c, idx, a)))
        r = np.empty(N, np.int32); cl.enqueue_copy(q, r, a)
        print("counts", int(r[0]), int(r[1]))
        who = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.zeros(1, np.int32))
        k = cl.Kernel(G, "one_writer"); k.set_args(a, who)
        evs = []
        for w in (0, 5, 70, 200, 0):
            cl.enqueue_copy(q, who, np.array([w], np.int32))
            evs.append(cl.enqueue_nd_range_kernel(q, k, (N,), (64,)))
        print("one_writer", [status(e) for e in evs])
        print("cross_group", status(G.cross_group(q, (N,), (64,), a)))
    ''' % GLOBAL_RACES, {"PYPLAT_CHECK": "bounds,races", "PYPLAT_WORKERS": "1"})
    out = p.stdout.split("\n")
    for line in ("bytes 0", "neighbours 0", "same_item 0", "counted 0", "scatter 0", "counts 256 512",
                 "one_writer [0, 0, 0, 0, 0]", "cross_group -5"):
        assert line in out, p.stdout
    found = findings(p.stderr)
    assert len(found) == 1, p.stderr
    assert "kernel 'cross_group' work-item global (133, 0, 0) local (5, 0, 0): data race: read after another " \
           "work-item's write of 4 bytes at offset 12 of __global argument 'a' (1024 bytes) (other work-item: " \
           "work-group linear id 0, local linear id 3)" in found[0], found[0]


def test_a_temporary_s_shadow_serves_the_next_buffer_of_its_size():
    """pyopencl makes its reductions' and scans' temporaries anew at every call: a destroyed
    buffer's race shadow is kept for the next buffer of the same size (core/check_shadows.py).
    Its old tags invent no race on the new buffer, and a race on it is still found."""
    p = run_script('''
        from pyplat.core import check_shadows
        G = cl.Program(ctx, %r).build()
        first = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.zeros(N, np.int32))
        print("first", status(G.same_item(q, (N,), (64,), first)), status(G.neighbours(q, (64,), (64,), first)))
        used = list(check_shadows._shadows.values())
        first.release()
        second = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.zeros(N, np.int32))
        print("second", status(G.same_item(q, (N,), (64,), second)), status(G.neighbours(q, (64,), (64,), second)))
        print("reused", any(s in used for s in check_shadows._shadows.values()))
        print("cross_group", status(G.cross_group(q, (N,), (64,), second)))
    ''' % GLOBAL_RACES, {"PYPLAT_CHECK": "bounds,races", "PYPLAT_WORKERS": "1"})
    out = p.stdout.split("\n")
    for line in ("first 0 0", "second 0 0", "reused True", "cross_group -5"):
        assert line in out, p.stdout
    found = findings(p.stderr)
    assert len(found) == 1 and "kernel 'cross_group'" in found[0], p.stderr


WORD_RACES = r"""
__kernel void add(__global const float *a, __global const float *b, __global float *c) {
    size_t i = get_global_id(0);
    c[i] = a[i] + b[i];
}
__kernel void halves(__global const float *a, __global float *c) {
    size_t i = get_global_id(0);
    c[i / 2] = a[i] + 1.0f;
}
__kernel void shift(__global const float4 *a, __global float4 *c) {
    size_t i = get_global_id(0);
    c[i] = a[i + 1];
}
__kernel void add_row(__global const float *a, __global float *c) {
    size_t i = get_global_id(0);
    c[i] = a[i] + get_global_id(1);
}
__kernel void neighbour(__global float *a) {
    size_t i = get_global_id(0);
    a[i] = a[i + 1] + 1.0f;
}
__kernel void low_bytes(__global const float *a, __global uchar *c) {
    size_t i = get_global_id(0);
    c[i] = (uchar)a[i];
}
"""


def test_global_races_of_whole_words_in_vectorised_loops():
    """Accesses of whole aligned words (one tag per 4 bytes; the loop over work-items is
    vectorised): element-wise kernels, in place too, and byte stores next to each other are no
    race; two work-items writing one float is, and so is reading a float4 that another
    work-item writes when the input and the output are one buffer, found with the right
    work-items and offsets; so are a read of the neighbour's word in one argument and a kernel
    indexed by get_global_id(0) alone launched in two dimensions."""
    p = run_script('''
        W = cl.Program(ctx, %r).build()
        n = 4096
        x = np.arange(n, dtype=np.float32)
        a = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=x)
        b = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=x)
        c = cl.Buffer(ctx, mf.READ_WRITE, 4 * n)
        print("add", status(W.add(q, (n,), (256,), a, b, c)))
        print("in place", status(W.add(q, (n,), (256,), a, b, a)))
        r = np.empty(n, np.float32); cl.enqueue_copy(q, r, a)
        print("sums", bool(np.array_equal(r, 2 * x)))
        print("low_bytes", status(W.low_bytes(q, (n,), (256,), b, c)))
        print("halves", status(W.halves(q, (n,), (256,), b, c)))
        print("shift", status(W.shift(q, (n // 4 - 1,), None, c, c)))
        print("neighbour", status(W.neighbour(q, (n - 1,), None, a)))
        print("add_row 2-D", status(W.add_row(q, (n, 2), (256, 1), a, c)))
    ''' % WORD_RACES, {"PYPLAT_CHECK": "bounds,races", "PYPLAT_WORKERS": "1"})
    out = p.stdout.split("\n")
    for line in ("add 0", "in place 0", "sums True", "low_bytes 0", "halves -5", "shift -5", "neighbour -5",
                 "add_row 2-D -5"):
        assert line in out, p.stdout + p.stderr
    found = findings(p.stderr)
    assert len(found) == 4, p.stderr
    # (what a proof that "index = global id: one word per work-item" would wrongly pass: the
    # neighbour's word in one argument, and a 1-D index in a 2-D launch)
    assert "kernel 'neighbour' work-item global (4094, 0, 0) local (4094, 0, 0): data race: write after " \
           "another work-item's read of 4 bytes at offset 16376 of __global argument 'a'" in found[2], found[2]
    assert "kernel 'add_row' work-item global (255, 1, 0) local (255, 0, 0): data race: write after another " \
           "work-item's write of 4 bytes at offset 1020 of __global argument 'c' (16384 bytes) (other " \
           "work-item: work-group linear id 0, local linear id 255)" in found[3], found[3]
    # (a group reports its largest local id's conflict)
    assert "kernel 'halves' work-item global (255, 0, 0) local (255, 0, 0): data race: write after another " \
           "work-item's write of 4 bytes at offset 508 of __global argument 'c' (16384 bytes) (other " \
           "work-item: local linear id 254 of the same work-group, no barrier between)" in found[0], found[0]
    assert "kernel 'shift' work-item global (1022, 0, 0) local (1022, 0, 0): data race: write after another " \
           "work-item's read of 16 bytes at offset 16352 of __global argument 'c' (16384 bytes) (other " \
           "work-item: local linear id 1021 of the same work-group, no barrier between)" in found[1], found[1]


PRIVATE = r"""
__kernel void pairs(__global float *c) {
    int i = get_global_id(0);
    c[2 * i] = c[2 * i + 1] + 1.0f;
}
__kernel void next_pair(__global float *c) {
    int i = get_global_id(0);
    c[2 * i] = c[2 * i + 2] + 1.0f;
}
__kernel void two_outputs(__global float *x, __global float *y) {
    size_t i = get_global_id(0);
    x[i] = 1.0f;
    y[i] = 2.0f + i;
}
"""


def test_private_arguments_skip_their_race_checks_only_where_the_proof_holds(monkeypatch):
    """check_private.py: an argument every access of which touches bytes of its own work-item
    only (get_global_id(0) times a constant stride, offsets within the stride) gets a `.fast`
    work-group function without its race checks; the launch takes it only where the proof's
    assumptions hold. A read of the next pair's word is not private and is found; two private
    arguments on one buffer (a sub-buffer 32 floats in) race and are found (the shared shadow
    sends the launch to the full version); so is a 2-D launch (tested in the word-tag test)."""
    monkeypatch.setenv("PYPLAT_CHECK", "bounds,races")
    from pyplat.compiler import build
    from pyplat.compiler.checker import windows as check_windows
    seen = {}
    real = check_windows.private_arguments
    monkeypatch.setattr(check_windows, "private_arguments",
                        lambda table, k: seen.setdefault(k.name, real(table, k)))
    r = build(PRIVATE, use_cache=False)
    assert r.ok, r.log
    assert seen == {"pairs": [0], "next_pair": [], "two_outputs": [0, 1]}
    assert "__pyplat_wg_pairs.fast" in r.llvm_ir and "__pyplat_wg_next_pair.fast" not in r.llvm_ir
    p = run_script('''
        P = cl.Program(ctx, %r).build()
        c = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.zeros(512, np.float32))
        print("pairs", status(P.pairs(q, (256,), (64,), c)))
        print("next_pair", status(P.next_pair(q, (255,), None, c)))
        align = ctx.devices[0].mem_base_addr_align // 8
        whole = cl.Buffer(ctx, mf.READ_WRITE, 4 * 1024)
        part = whole.get_sub_region(align, 4 * 1024 - align)
        print("two_outputs", status(P.two_outputs(q, (256,), (64,), whole, part)), align // 4)
    ''' % PRIVATE, {"PYPLAT_CHECK": "bounds,races", "PYPLAT_WORKERS": "1"})
    out = p.stdout.split("\n")
    assert "pairs 0" in out and "next_pair -5" in out, p.stdout + p.stderr
    assert any(line.startswith("two_outputs -5") for line in out), p.stdout + p.stderr
    found = findings(p.stderr)
    assert len(found) == 2, p.stderr
    assert "kernel 'next_pair'" in found[0] and "data race: write after another work-item's read" in found[0]
    # (x[63] of work-item 63 is y[31] of work-item 31: y starts 32 floats into x's buffer)
    assert "kernel 'two_outputs' work-item global (63, 0, 0) local (63, 0, 0): data race: write after another " \
           "work-item's write of 4 bytes at offset 252 of __global argument 'x' (4096 bytes) (other work-item: " \
           "local linear id 31 of the same work-group, no barrier between)" in found[1], found[1]


@pytest.mark.parametrize("kinds", ["bounds", "uninit", "races"])
def test_checked_lockstep_loops_keep_their_exit_free_passes(monkeypatch, kinds):
    """The *_in_full_passes cases above are found in the exit-free copy of their loops
    (lockstep_exitfree.py): checked builds have that copy, and each access in it shares the
    site slot of its twin in the generic pass (the reduction's loop: one slot for `in[i]`)."""
    from pyplat.compiler import build
    monkeypatch.setenv("PYPLAT_CHECK", kinds)
    r = build(CATALOGUE, use_cache=False)
    assert r.ok, r.log
    functions = {}          # (races: the .full and .fast versions together)
    for m in re.finditer(r"define [^@]*@\"?__pyplat_wg_(\w+)[^\n]*\n.*?\n}\n", r.llvm_ir, re.S):
        functions[m.group(1)] = functions.get(m.group(1), "") + m.group(0)
    for name in ("sum_past_global_in_full_passes", "uninit_read_in_full_passes", "global_race_in_full_passes"):
        assert "ls.exitfree" in functions[name], name
    if kinds == "bounds":       # in[i] (twice), part[l] =, part[0], part[63], out[0] =: 5 sites
        slots = re.findall(r"%\"?check\.slot[.\d]*\"? = alloca", functions["sum_past_global_in_full_passes"])
        assert len(slots) == 5, slots
