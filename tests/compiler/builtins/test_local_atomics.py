"""Atomics on __local memory on the CPU (builtins/atomics.py): one thread runs the whole group, so
they are plain read-modify-writes; the results a kernel relies on stay those of atomics (the
NVPTX target keeps atom.shared: test_compiler_nvptx.py)."""
import numpy as np

from pyplat.compiler import build
from support.compiled import Local, run


def fresh(src):
    """Built now, not taken from the kernel cache: its LLVM IR is there to inspect."""
    r = build(src, use_cache=False)
    assert r.ok, r.log
    return r

WG = 64

ALL_OPS = """
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
__kernel void ops(__global int *old, __global int *fin, __global long *wide, __local int *li) {
    __local uint lu[4];
    __local long ll[2];
    int lid = get_local_id(0);
    if (lid == 0) {
        li[0] = 0; li[1] = 1000; li[2] = -1000; li[3] = 0; li[4] = -1; li[5] = 0; li[6] = 0;
        lu[0] = 0; lu[1] = 7; lu[2] = 0; ll[0] = 0; ll[1] = 100;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    __global int *o = old + 10 * lid;
    o[0] = atomic_add(&li[0], lid);
    o[1] = atomic_min(&li[1], lid - 20);
    o[2] = atomic_max(&li[2], lid - 20);
    o[3] = atomic_inc(&li[3]);
    o[4] = atomic_and(&li[4], ~(1 << (lid % 31)));
    o[5] = atomic_or(&li[5], 1 << (lid % 31));
    o[6] = atomic_cmpxchg(&li[6], 0, lid + 1);
    o[7] = atomic_xchg(&lu[0], (uint)lid + 1);
    o[8] = atomic_dec(&lu[1]);
    o[9] = atomic_umax_check;
    atom_add(&ll[0], (long)lid << 33);
    atom_sub(&ll[1], 1L);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        for (int i = 0; i < 7; i++) fin[i] = li[i];
        fin[7] = lu[0]; fin[8] = lu[1]; fin[9] = lu[2];
        wide[0] = ll[0]; wide[1] = ll[1];
    }
}
""".replace("atomic_umax_check", "atomic_max(&lu[2], (uint)(lid * 0x05000000u))")


def test_local_atomics_give_atomic_results():
    r = fresh(ALL_OPS)
    old = np.zeros((WG, 10), np.int32)
    fin = np.zeros(10, np.int32)
    wide = np.zeros(2, np.int64)
    run(r.kernels["ops"], [old, fin, wide, Local(4 * 8)], (WG,), (WG,))
    lid = np.arange(WG)
    # the work-items' order is unspecified: check what holds for every order
    assert fin[0] == lid.sum() and old[:, 0].min() == 0 and old[:, 0].max() <= lid.sum()
    assert fin[1] == -20 and fin[2] == WG - 21
    assert sorted(old[:, 3]) == list(range(WG)) and fin[3] == WG
    assert fin[4] == -2**31 and fin[5] == 2**31 - 1        # bits 0..30 cleared / set
    assert (old[:, 6] == 0).sum() == 1 and fin[6] == lid[old[:, 6] == 0][0] + 1
    assert sorted(old[:, 7].tolist() + [int(fin[7])]) == [0] + list(range(1, WG + 1))
    assert sorted(old[:, 8].astype(np.uint32).tolist()) == sorted(((7 - np.arange(WG)) % 2**32).tolist())
    assert np.uint32(fin[9]) == max((i * 0x05000000) % 2**32 for i in range(WG))   # unsigned compare
    assert wide[0] == int(lid.sum()) << 33 and wide[1] == 100 - WG


def test_local_atomics_need_no_atomic_instruction_global_ones_keep_it():
    local_only = fresh("""__kernel void h(__global const uint *k, __global uint *bins) {
        __local uint b[16];
        b[get_local_id(0) % 16] = 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        atomic_inc(&b[k[get_global_id(0)] % 16]);
        barrier(CLK_LOCAL_MEM_FENCE);
        if (get_local_id(0) < 16) bins[get_local_id(0)] = b[get_local_id(0)];
    }""")
    assert "atomicrmw" not in local_only.llvm_ir
    keys = np.random.RandomState(3).randint(0, 1000, 4 * WG).astype(np.uint32)
    bins = np.zeros(16, np.uint32)
    run(local_only.kernels["h"], [keys, bins], (WG,), (WG,))   # the first group of 64 keys
    expect = np.bincount(keys[:WG] % 16, minlength=16).astype(np.uint32)
    np.testing.assert_array_equal(bins, expect)
    exchange = fresh("__kernel void x(__global int *o) { __local int l; l = 0; o[0] = atomic_cmpxchg(&l, 0, 1); }")
    assert "cmpxchg" not in exchange.llvm_ir
    global_too = fresh("__kernel void g(__global uint *c) { atomic_inc(c); atomic_cmpxchg(c + 1, 0, 1); }")
    assert "atomicrmw" in global_too.llvm_ir and "cmpxchg" in global_too.llvm_ir
