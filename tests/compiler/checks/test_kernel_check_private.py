"""PYPLAT_CHECK=races: the proofs that let a launch leave an argument's race checks out
(compiler/checker/private_proofs.py, private_launch.py, versions.py). Each proof skips a
check only where no two work-items can touch the same bytes; for each, a launch where they do
(the proof's launch test fails, the full version runs) still reports the race, with the
work-items that raced."""
import pytest

from support.kernel_check import findings, run_script

pytest.importorskip("pyopencl")

PROOFS = r"""
__kernel void rows(__global float *out, int width) {
    int x = get_global_id(0), y = get_global_id(1);
    out[y * width + x] = x + 1000.0f * y;
}
__kernel void tile_transpose(__global float *out, __global const float *in, int width, int height) {
    __local float tile[4][5];
    int gx = get_group_id(0) * 4, gy = get_group_id(1) * 4;
    int lx = get_local_id(0), ly = get_local_id(1);
    tile[ly][lx] = in[(gy + ly) * width + gx + lx];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[(gx + ly) * height + gy + lx] = tile[lx][ly];
}
__kernel void per_group(__global float *out, __global const float *in) {
    unsigned int lid = get_local_id(0);
    if (lid == 0)
        out[get_group_id(0)] = in[get_global_id(0)] + get_global_id(1);
}
__kernel void two_per_group(__global float *out) {
    unsigned int lid = get_local_id(0);
    if (lid < 2)
        out[get_group_id(0)] = lid;
}
__kernel void copy_view(__global float *x__base, long x__offset, __global float *y) {
    __global float *x = (__global float *)((__global char *) x__base + x__offset);
    size_t i = get_global_id(0);
    y[i] = x[i] + 1.0f;
}
"""


def test_proofs_hold_statically_where_they_should(monkeypatch):
    """Which arguments get a proof (the launch tests the rest), and which are read-only for the
    race check: pyopencl's view `x = x__base + x__offset` read only is, though the pointer is
    copied (analysis.written_params counts it as written)."""
    monkeypatch.setenv("PYPLAT_CHECK", "bounds,races")
    from pyplat.compiler import build
    from pyplat.compiler.checker import versions as check_versions, windows as check_windows
    proofs, read_only = {}, {}
    real_private, real_read_only = check_windows.private_arguments, check_versions.read_only_arguments
    monkeypatch.setattr(check_windows, "private_arguments",
                        lambda table, k: proofs.setdefault(k.name, real_private(table, k)))
    monkeypatch.setattr(check_versions, "read_only_arguments",
                        lambda mg, k: read_only.setdefault(k.name, real_read_only(mg, k)))
    r = build(PROOFS, use_cache=False)
    assert r.ok, r.log
    assert proofs["rows"] == [0] and proofs["tile_transpose"][:1] == [0], proofs
    # (two writers per group: the proof leaves local size 0 to the launch, which sends every
    # launch with groups wider than 1 to the full version)
    assert proofs["per_group"][:1] == [0] and proofs["two_per_group"] == [0], proofs
    assert read_only["copy_view"] == (0,) and read_only["tile_transpose"] == (1,), read_only
    assert read_only["per_group"] == (1,), read_only
    for kernel in ("rows", "tile_transpose", "per_group", "copy_view"):
        assert "__pyplat_wg_%s.fast" % kernel in r.llvm_ir, kernel


def test_launches_the_proofs_do_not_cover_still_find_their_races():
    """2-D rows with the row length at least the global size 0: no race; shorter rows (item
    (x, y) and (x + width, y - 1) write one float): found. The tiled transpose with the right
    height: no race; a height of half the side: found. One write per group under `lid == 0`: no
    race, also in two dimensions... where the second local id makes two writers: found; two
    writers under `lid < 2`: found."""
    p = run_script('''
        P = cl.Program(ctx, %r).build()
        out = cl.Buffer(ctx, mf.READ_WRITE, 4 * 4096)
        src = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.arange(4096, dtype=np.float32))
        print("rows", status(P.rows(q, (32, 8), (8, 4), out, np.int32(32))))
        r = np.empty(256, np.float32); cl.enqueue_copy(q, r, out)
        x, y = np.meshgrid(np.arange(32), np.arange(8))
        print("rows right", bool(np.array_equal(r, (x + 1000.0 * y).ravel())))
        print("short rows", status(P.rows(q, (32, 8), (8, 4), out, np.int32(31))))
        print("transpose", status(P.tile_transpose(q, (16, 16), (4, 4), out, src, np.int32(16), np.int32(16))))
        r = np.empty(256, np.float32); cl.enqueue_copy(q, r, out)
        print("transpose right", bool(np.array_equal(r.reshape(16, 16), np.arange(256, dtype=np.float32).reshape(16, 16).T)))
        print("half height", status(P.tile_transpose(q, (16, 16), (4, 4), out, src, np.int32(16), np.int32(8))))
        print("per_group", status(P.per_group(q, (256,), (64,), out, src)))
        print("per_group 2-D", status(P.per_group(q, (64, 2), (64, 2), out, src)))
        print("two_per_group", status(P.two_per_group(q, (256,), (64,), out)))
    ''' % PROOFS, {"PYPLAT_CHECK": "bounds,races", "PYPLAT_WORKERS": "1"})
    out = p.stdout.split("\n")
    for line in ("rows 0", "rows right True", "short rows -5", "transpose 0", "transpose right True",
                 "half height -5", "per_group 0", "per_group 2-D -5", "two_per_group -5"):
        assert line in out, p.stdout + p.stderr
    found = findings(p.stderr)
    assert len(found) == 4, p.stderr
    # (item (31, 2) writes float 93, as item (0, 3) of group 0 did)
    assert "kernel 'rows' work-item global (31, 2, 0) local (7, 2, 0): data race: write after another " \
           "work-item's write of 4 bytes at offset 372 of __global argument 'out'" in found[0], found[0]
    assert "kernel 'tile_transpose'" in found[1] and "data race: write after another work-item's write" \
           in found[1] and "argument 'out'" in found[1], found[1]
    assert "kernel 'per_group' work-item global (0, 1, 0) local (0, 1, 0): data race: write after another " \
           "work-item's write of 4 bytes at offset 0 of __global argument 'out'" in found[2], found[2]
    assert "kernel 'two_per_group'" in found[3] and "local (1, 0, 0)" in found[3], found[3]
