"""The NVPTX target (pyplat/compiler/targets/nvptx/), offline: the PTX
emitted for test kernels is checked for what the CUDA device class relies on (docs/compiler.md,
"NVPTX target": entries, parameters, special registers, shared memory, barriers, atomics, no
host symbols) and assembled with ptxas when NVIDIA's nvidia-cuda-nvcc wheel (or a CUDA toolkit)
provides one; programs the device cannot run are build errors."""
import re
import subprocess

import pytest

from pyplat.compiler import build, load_package, nvptx_target
from pyplat.compiler.targets.nvptx import libdevice
from pyplat.compiler.targets.nvptx import abi
from support.nvptx import SM90, assert_device_only, entry, find_ptxas, ptx_of


VADD = """
__kernel void vadd(__global const float *a, __global const float *b, __global float *c, int n) {
    int i = get_global_id(0);
    if (i < n) c[i] = a[i] + b[i];
}
"""

TILE = """
#define T 16
__kernel __attribute__((reqd_work_group_size(T, T, 1)))
void transpose(__global const float *in, __global float *out, int w, int h) {
    __local float tile[T][T + 1];
    int x = get_global_id(0), y = get_global_id(1);
    tile[get_local_id(1)][get_local_id(0)] = in[y * w + x];
    barrier(CLK_LOCAL_MEM_FENCE);
    int ox = get_group_id(1) * T + get_local_id(0), oy = get_group_id(0) * T + get_local_id(1);
    out[oy * h + ox] = tile[get_local_id(0)][get_local_id(1)];
}
"""

LOCAL_ARGS = """
__kernel void reduce(__global const float *in, __global float *out, __local float *scratch,
                     int unused, __local int *flags) {
    size_t l = get_local_id(0);
    scratch[l] = in[get_global_id(0)];
    flags[l] = 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t s = get_local_size(0) / 2; s > 0; s /= 2) {
        if (l < s) scratch[l] += scratch[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) out[get_group_id(0)] = scratch[0] + flags[0];
}
"""

ATOMICS = """
__kernel void count(__global int *c, __global ulong *wide, __local int *lc, __global float *fx) {
    if (get_local_id(0) == 0) *lc = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_inc(lc);
    atomic_add(c, 2);
    atomic_max(c + 1, (int)get_global_id(0));
    atomic_cmpxchg(c + 2, 0, 1);
    atom_add(wide, 1ul);
    atomic_xchg(fx, 1.0f);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0) atomic_add(c + 3, *lc);
}
"""

MATH = """
__kernel void math(__global float *f, __global double *d, __global float4 *v) {
    size_t i = get_global_id(0);
    f[i] = sin(f[i]) + exp(f[i]) + pow(f[i], 2.5f) + log(f[i]) + tanh(f[i]) + fmod(f[i], 3.0f)
         + cbrt(f[i]) + erf(f[i]) + tgamma(f[i]);
    d[i] = cos(d[i]) + atan2(d[i], 2.0) + cbrt(d[i]) + log10(d[i]) + exp2(d[i]) + rootn(d[i], 3);
    v[i] = sin(v[i]) + mix(v[i], v[i], 0.5f) + floor(v[i]) + native_exp(v[i]);
    int e, s;
    float fr = frexp(f[i], &e);
    f[i] += fr + ldexp(fr, e) + ilogb(fr) + lgamma_r(fr, &s) + s;
}
"""

IDS = """
__kernel void ids(__global uint *o) {
    size_t g = (get_global_id(2) * get_global_size(1) + get_global_id(1)) * get_global_size(0)
             + get_global_id(0);
    o[g] = get_global_offset(0) + get_global_offset(1) + get_global_offset(2) + get_work_dim()
         + get_num_groups(2) + get_local_size(1) + get_group_id(2) + get_local_id(2);
}
"""


def params(ptx, name):
    head = entry(ptx, name)
    return re.findall(r"\.param [^\n,]*", head[:head.index(")")])


# --------------------------------------------------------------------------------- the ABI
def test_vadd_entry_parameters_and_special_registers():
    r = ptx_of(VADD)
    k = r.kernels["vadd"]
    assert k.symbol == "vadd" and k.address is None
    assert [a.kind for a in k.args] == ["global", "global", "global", "value"]
    ptx = r.ptx
    assert ".target sm_90" in ptx and ".address_size 64" in ptx
    assert ".visible .entry vadd(" in ptx
    ps = params(ptx, "vadd")
    assert len(ps) == 4 + 1                                        # the arguments, the launch record
    assert all(".u64" in p for p in ps[:3])                        # device addresses
    assert re.search(r"\.b8 vadd_param_3\[4\]", ps[3])             # an int's bytes
    assert re.search(r"\.align 8 \.b8 vadd_param_4\[56\]", ps[4])  # launch record: 7 x u64
    body = entry(ptx, "vadd")
    for reg in ("%tid.x", "%ntid.x", "%ctaid.x"):
        assert reg in body
    assert "ld.global" in body and "st.global" in body
    assert "[vadd_param_4+8]" in body                              # global_size[0]
    assert "[vadd_param_4+32]" in body                             # global_offset[0]
    assert_device_only(ptx)


def test_every_kernel_launches_with_the_largest_block():
    """A kernel without reqd_work_group_size is compiled for blocks of up to 1024 threads (its
    registers capped to fit), so launches with the device's max work-group size never fail;
    with the attribute, its exact block size."""
    ptx = ptx_of(VADD + """
        __kernel __attribute__((reqd_work_group_size(64, 2, 1))) void fixed(__global int *a) {
            a[get_global_id(0)] = 1;
        }""").ptx
    assert re.search(r"\.entry vadd\([^{]*\.maxntid 1024\b", ptx, re.S)
    fixed = re.search(r"\.entry fixed\([^{]*", ptx, re.S).group(0)
    assert ".reqntid 64, 2, 1" in fixed and ".maxntid" not in fixed


def test_metadata_matches_the_cpu_build():
    for src in (VADD, TILE, LOCAL_ARGS, ATOMICS):
        cpu, gpu = build(src, use_cache=False), ptx_of(src)
        assert list(cpu.kernels) == list(gpu.kernels)
        for name, k in cpu.kernels.items():
            g = gpu.kernels[name]
            assert [repr(a) for a in k.args] == [repr(a) for a in g.args]
            assert (k.local_mem_size, k.reqd_work_group_size, k.attributes, k.private_mem_size) == \
                   (g.local_mem_size, g.reqd_work_group_size, g.attributes, g.private_mem_size)
            assert k.symbol == "__pyplat_wg_" + name and k.address


def test_barrier_and_local_tile_are_shared_memory_and_bar_sync():
    r = ptx_of(TILE)
    assert r.kernels["transpose"].local_mem_size == 16 * 17 * 4
    body = entry(r.ptx, "transpose")
    assert re.search(r"\.shared \.align \d+ \.b8 \S+\[1088\]", r.ptx)
    assert body.count("bar.sync") == 1
    assert "st.shared" in body and "ld.shared" in body
    for reg in ("%tid.y", "%ctaid.y"):
        assert reg in body


def test_local_pointer_arguments_are_offsets_into_dynamic_shared_memory():
    r = ptx_of(LOCAL_ARGS)
    assert [a.kind for a in r.kernels["reduce"].args] == ["global", "global", "local", "value", "local"]
    ps = params(r.ptx, "reduce")
    assert len(ps) == 6
    assert ".u64 reduce_param_2" in ps[2] and ".ptr" not in ps[2]     # byte offsets
    assert ".u64 reduce_param_4" in ps[4] and ".ptr" not in ps[4]
    assert re.search(r"\.extern \.shared \.align 128 \.b8 \w+\[\]", r.ptx)
    body = entry(r.ptx, "reduce")
    assert body.count("bar.sync") >= 2 and "ld.shared" in body
    assert abi.shared_layout([100, 8, 4]) == ([0, 128, 256], 260)
    assert abi.shared_layout([]) == ([], 0)


def test_launch_record_and_dimensions():
    import struct
    rec = abi.launch_record(2, (64, 32), (5, 6))
    assert len(rec) == abi.LAUNCH_RECORD_SIZE == 56
    assert struct.unpack("<7Q", rec) == (2, 64, 32, 1, 5, 6, 0)
    assert struct.unpack("<7Q", abi.launch_record(1, [100])) == (1, 100, 1, 1, 0, 0, 0)
    assert abi.launch_dimensions(2, (64, 32), (16, 8)) == ((4, 4, 1), (16, 8, 1))
    assert abi.launch_dimensions(3, (8, 4, 2), (4, 2, 1)) == ((2, 2, 2), (4, 2, 1))


def test_by_value_arguments_are_their_bytes():
    src = """typedef struct { float a; int b; double c; } S;
    __kernel void k(__global float *o, S s, float4 v, char c) { o[0] = s.a + s.b + s.c + v.w + c; }"""
    ps = params(ptx_of(src).ptx, "k")
    assert re.search(r"\.align 8 \.b8 k_param_1\[16\]", ps[1])
    assert re.search(r"\.align 16 \.b8 k_param_2\[16\]", ps[2])
    assert re.search(r"\.b8 k_param_3\[1\]", ps[3])


def test_atomics_on_global_and_local_memory():
    body = entry(ptx_of(ATOMICS).ptx, "count")
    assert "atom.shared.add.u32" in body
    assert "atom.global.add.u32" in body and "atom.global.add.u64" in body
    assert "atom.global.max.s32" in body
    assert re.search(r"atom\.\S*cas\.b32", body)
    assert "atom.global.exch.b32" in body


def test_math_builtins_come_from_libdevice_not_the_host():
    if libdevice.path() is None:
        pytest.skip("libdevice not installed (pip install nvidia-cuda-nvcc-cu12)")
    r = ptx_of(MATH)
    assert_device_only(r.ptx)
    r_fast = ptx_of(MATH, "-cl-fast-relaxed-math")
    assert_device_only(r_fast.ptx)


def test_math_without_libdevice_is_a_build_error(monkeypatch):
    monkeypatch.setattr(libdevice, "path", lambda: None)
    r = build(MATH, use_cache=False, target=SM90)
    assert not r.ok
    assert "libdevice" in r.log and "nvidia-cuda-nvcc-cu12" in r.log
    assert "internal compiler error" not in r.log
    assert ptx_of(VADD).ok                          # programs without math builtins do not need it


def test_work_item_functions_in_three_dimensions():
    body = entry(ptx_of(IDS).ptx, "ids")
    for reg in ("%tid.z", "%ntid.y", "%ctaid.z", "%nctaid.z"):
        assert reg in body
    # launch record words read: work_dim, global_size[0..2], global_offset[0..2] (the record's
    # address may first be taken into a register)
    offsets = {int(m or 0) for m in re.findall(r"ld\.param\.b64\s+%rd\d+, \[(?:ids_param_1|%rd\d+)(?:\+(\d+))?\]", body)}
    assert {0, 8, 16, 24, 32, 40, 48} <= offsets, offsets


def test_barriers_in_helpers_and_with_goto_need_no_fission():
    src = """
    void sync_add(__local int *t, int v) { t[get_local_id(0)] += v; barrier(CLK_LOCAL_MEM_FENCE); }
    __kernel void k(__global int *o, __local int *t) {
        int i = 0;
        t[get_local_id(0)] = 0;
    again:
        sync_add(t, 1);
        if (++i < 3) goto again;
        o[get_global_id(0)] = t[get_local_id(0)];
    }"""
    assert not build(src, use_cache=False).ok             # the CPU's fission cannot do this
    body = entry(ptx_of(src).ptx, "k")
    assert "bar.sync" in body


def test_barrier_in_switch_and_program_scope_constants():
    src = """
    __constant float table[4] = {1, 2, 3, 4};
    __kernel void k(__global float *o, int mode, __local float *t) {
        t[get_local_id(0)] = table[get_local_id(0) & 3];
        switch (mode) {
        case 0: barrier(CLK_LOCAL_MEM_FENCE); o[get_global_id(0)] = t[0]; break;
        default: barrier(CLK_LOCAL_MEM_FENCE); o[get_global_id(0)] = t[1];
        }
    }"""
    assert build(src, use_cache=False).ok                 # the CPU's fission: barrier_flow.py's ifs
    ptx = ptx_of(src).ptx
    assert entry(ptx, "k").count("bar.sync") == 2
    assert re.search(r"\.global \.align 4 \.b8 \S*table\S*\[16\] = \{0, 0, 128, 63,", ptx)


# --------------------------------------------------------------------------------- errors
@pytest.mark.parametrize("src, message", [
    ('__kernel void k(__constant char *s) { printf("%s\\n", s); }',
     "printf: the argument of %s must be a string literal on this device"),
])
def test_unsupported_programs_are_build_errors(src, message):
    r = build(src, use_cache=False, target=SM90)
    assert not r.ok
    line = [x for x in r.log.splitlines() if "error" in x][0]
    assert message in line and re.match(r"<source>:1:\d+: error: ", line), r.log
    assert "internal compiler error" not in r.log


def test_user_errors_and_bad_options_are_reported_as_on_the_cpu():
    r = build("__kernel void k(__global int *o) { o[0] = undefined_thing; }", use_cache=False, target=SM90)
    assert not r.ok and "undefined_thing" in r.log
    r = build(VADD, "-cl-no-such-option", use_cache=False, target=SM90)
    assert not r.ok and r.invalid_options


def test_target_names_an_architecture():
    assert nvptx_target("sm_80") == nvptx_target("sm_80") != nvptx_target("sm_90")
    for bad in ("sm90", "compute_90", "", None, "sm_9", "sm_60", "sm_80a"):
        with pytest.raises(ValueError):
            nvptx_target(bad)
    assert ".target sm_80" in ptx_of(VADD, target=nvptx_target("sm_80")).ptx


# --------------------------------------------------------------------------------- the cache
def test_cache_is_keyed_by_target(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPLAT_CACHE_DIR", str(tmp_path))
    cpu = build(VADD)
    gpu = build(VADD, target=SM90)
    gpu80 = build(VADD, target=nvptx_target("sm_80"))
    assert len({cpu.cache_key, gpu.cache_key, gpu80.cache_key}) == 3
    again = build(VADD, target=SM90)
    assert again.timings.get("cached") and again.ptx == gpu.ptx
    assert again.kernels["vadd"].symbol == "vadd" and again.kernels["vadd"].address is None
    assert build(VADD).kernels["vadd"].address                  # the CPU entry is still native code
    assert load_package(gpu.package) is None                     # PTX is never loaded as host code
    assert load_package(cpu.package).kernels["vadd"].address


# --------------------------------------------------------------------------------- ptxas
@pytest.mark.parametrize("name, src, options", [
    ("vadd", VADD, ""), ("tile", TILE, ""), ("local_args", LOCAL_ARGS, ""), ("atomics", ATOMICS, ""),
    ("math", MATH, ""), ("math_fast", MATH, "-cl-fast-relaxed-math"), ("ids", IDS, ""),
    ("unoptimised", TILE + LOCAL_ARGS + MATH, "-cl-opt-disable")])
def test_ptxas_assembles_the_ptx(name, src, options, tmp_path):
    ptxas = find_ptxas()
    if ptxas is None:
        pytest.skip("ptxas not installed (pip install nvidia-cuda-nvcc-cu12)")
    if "math" in src and libdevice.path() is None:
        pytest.skip("libdevice not installed")
    path = tmp_path / (name + ".ptx")
    path.write_text(ptx_of(src, options).ptx)
    p = subprocess.run([ptxas, "-arch=sm_90", str(path), "-o", str(tmp_path / (name + ".cubin"))],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


def test_generated_programs_build_and_assemble(tmp_path):
    """Valid programs of the differential generator (tests/support/difftest: every operator, vector
    type, conversion and many builtins) build for NVPTX, and ptxas accepts the PTX."""
    import random
    from support.difftest import generator, runner
    rng = random.Random(14)
    ptxas = find_ptxas()
    for i in range(8):
        src, header = runner.batch_source([generator.generate(rng.randrange(1 << 30), "p_")])
        (tmp_path / runner.HEADER).write_text(header if isinstance(header, str) else "\n".join(header))
        r = build(src, "-I " + str(tmp_path), use_cache=False, target=SM90)
        assert r.ok, r.log
        assert_device_only(r.ptx)
        if ptxas:
            path = tmp_path / ("p%d.ptx" % i)
            path.write_text(r.ptx)
            p = subprocess.run([ptxas, "-arch=sm_90", str(path), "-o", str(tmp_path / "p.cubin")],
                               capture_output=True, text=True)
            assert p.returncode == 0, p.stderr


PACKED = r"""
struct __attribute__((__packed__)) wrapped { long value; int dummy; };
__kernel void k(__global long *o, __global struct wrapped *g) {
    __local struct wrapped d[4][17];
    size_t l = get_local_id(0);
    d[l % 4][l % 17].value = g[l].value;
    barrier(CLK_LOCAL_MEM_FENCE);
    o[l] = d[(l + 1) % 4][l % 17].value;
}
"""


def test_members_of_packed_structs_are_never_accessed_wider_than_their_alignment():
    """pyopencl's scan packs {scan_type value; int dummy;} on GPUs: an 8-byte member at a
    12-byte stride. The GPU faults on a misaligned 8-byte access (CUDA_ERROR_MISALIGNED_ADDRESS),
    where x86 forgives it: the accesses must use the member's real alignment."""
    ptx = ptx_of(PACKED).ptx
    # o[l] is a plain long: its 8-byte store is right; every access to a packed member is not.
    wide = [line.strip() for line in ptx.splitlines()
            if re.search(r"\b(ld\.global|ld\.shared|st\.shared)\.(b|u|s)64\b", line)]
    assert not wide, wide
    assert re.search(r"\bst\.global\.(b|u|s)64\b", ptx)


PACKED_DOUBLE = r"""
struct __attribute__((__packed__)) wrapped { double value; int dummy; };
__kernel void k(__global const double *in, __global double *out) {
    __local struct wrapped d[65];
    size_t l = get_local_id(0);
    d[l].value = in[l] + in[l + 1];          /* an f64 result stored byte by byte */
    barrier(CLK_LOCAL_MEM_FENCE);
    out[l] = d[(l + 1) % 64].value;
}
"""


def test_truncating_stores_go_through_a_copy_of_the_register():
    """The CUDA 13 driver's PTX JIT stores the low byte of the *integer value* for
    `st.shared.b8 [a], %rd` when an f64 instruction wrote %rd (pyopencl's float64 scan read
    7.0 back as 7.000000000000006 on an H100); a copy of the register first gives its bits
    (targets/nvptx/ptx_fixups.py). No store may name a register wider than what it stores."""
    ptx = ptx_of(PACKED_DOUBLE).ptx
    assert re.search(r"add\.rn\.f64", ptx)
    widths = {"rs": 16, "r": 32, "rd": 64}
    stores = re.findall(r"\bst(?:\.[a-z]+)*\.[bsu](8|16|32)\s+\[[^\]]*\],\s*%(rs|rd|r)\d+", ptx)
    assert not [s for s in stores if widths[s[1]] > int(s[0])], stores
    assert re.search(r"mov\.b64 %pp_bits, %rd\d+; st\.shared\.b8 \[[^\]]*\], %pp_bits;", ptx)


def test_ptxas_assembles_the_store_copies(tmp_path):
    ptxas = find_ptxas()
    if ptxas is None:
        pytest.skip("ptxas not installed (pip install nvidia-cuda-nvcc-cu12)")
    path = tmp_path / "packed.ptx"
    path.write_text(ptx_of(PACKED_DOUBLE).ptx)
    p = subprocess.run([ptxas, "-arch=sm_90", str(path), "-o", str(tmp_path / "packed.cubin")],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
