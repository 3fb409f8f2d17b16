"""Holes found by the soundness audit (docs/soundness.md), one small case each.

- barriers.py `_induction_steps`: a variable written only through a component (`st.x = lid`)
  counted as never written, so its initialiser was taken as its value for the whole group
  (`_uniform`): a per-work-item loop step read at group level, and the build failed.
- barrier_tree.assigned_vars (the checker's "never assigned"): the same blind spot.
- cache.key: a program that includes a file, built with the same text and options from another
  working directory, was served the entry of the first (a relative `-I`, a quoted include).
"""
import os

import numpy as np

from pyplat.compiler import build
from support.compiled import run
from support.kernel_check import typed_kernels

STRIDED = """
kernel void k(global int *out, int n, char c) {
    char4 st = (char4)(c);
    st.x = (char)(get_local_id(0) + 1);      /* a per-work-item step, written as a component */
    st.yzw = (char3)(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = get_local_id(0); i < n; i += as_int(st))
        atomic_inc(&out[i]);
    barrier(CLK_LOCAL_MEM_FENCE);
}
"""


def test_component_write_is_a_write_of_the_loop_step():
    r = build(STRIDED, use_cache=False)
    assert r.ok, r.log
    out = np.zeros(80, np.int32)
    run(r.kernels["k"], [out, np.int32(64), np.int8(1)], (16,), (16,))
    want = np.zeros(80, np.int32)
    for lid in range(16):
        for i in range(lid, 64, lid + 1):
            want[i] += 1
    assert out.tolist() == want.tolist()      # (PoCL gives the same)


def test_assigned_vars_sees_component_and_member_writes():
    from pyplat.compiler.lowering.barrier_tree import assigned_vars
    k = typed_kernels("typedef struct { int a; int b; } S;\n"
                      "kernel void k(global int *out, int2 v, S s) {"
                      " v.y = get_local_id(0); s.b = 1; out[v.y + s.b] = 0; }")["k"]
    names = {v.name for v in assigned_vars(k.body)}
    assert {"v", "s"} <= names


def test_cache_key_depends_on_the_directory_includes_resolve_in(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPLAT_CACHE_DIR", str(tmp_path / "cache"))
    src = '#include "audit_name.h"\nkernel void NAME(global int *o) { o[0] = 1; }\n'
    for d, name in (("a", "ka"), ("b", "kb")):
        (tmp_path / d / "inc").mkdir(parents=True)
        (tmp_path / d / "inc" / "audit_name.h").write_text("#define NAME %s\n" % name)
    for d, name in (("a", "ka"), ("b", "kb")):
        monkeypatch.chdir(tmp_path / d)
        r = build(src, "-I inc")
        assert r.ok, r.log
        assert sorted(r.kernels) == [name]
    monkeypatch.chdir(tmp_path / "a")          # (the same directory still hits)
    r = build(src, "-I inc")
    assert r.timings.get("cached") and sorted(r.kernels) == ["ka"]
    assert os.getcwd() == str(tmp_path / "a")
