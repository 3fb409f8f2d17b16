"""clCompileProgram + clLinkProgram for devices that run code of their own (NVPTX), offline:
the compiler's compile_object/link for a target (PTX checked and assembled with ptxas when it is
installed), and core Program objects with stub devices whose compiler target is NVPTX (what a
CUDA device is to Program: docs/devices.md). No GPU is needed."""
import re
import subprocess

import pytest

from pyplat import cl
from pyplat.compiler import HOST, compile_object, link, load_package, nvptx_target, unpack_object
from pyplat.compiler.objects import ANY_TARGET
from pyplat.compiler.targets.nvptx import libdevice
from pyplat.core.program import Program
from support.nvptx import assert_device_only, entry, find_ptxas

SM90 = nvptx_target("sm_90")

HELPERS = """
float scale(float x) { return 2.0f * x + sin(x); }
__constant int offsets[3] = {7, 8, 9};
"""
KERNEL = """
float scale(float x);
extern __constant int offsets[3];
__kernel void k(__global float *o) { size_t i = get_global_id(0); o[i] = scale(o[i]) + offsets[i % 3]; }
"""
OTHER = "__kernel void other(__global int *o) { o[get_global_id(0)] = 5; }\n"


def objects(*sources, target=SM90):
    out = []
    for src in sources:
        r = compile_object(src, target=target)
        assert r.ok, r.log
        out.append(r.data)
    return out


def assemble(ptx, tmp_path):
    ptxas = find_ptxas()
    if ptxas is None:
        return
    path = tmp_path / "linked.ptx"
    path.write_text(ptx)
    p = subprocess.run([ptxas, "-arch=sm_90", str(path), "-o", str(tmp_path / "linked.cubin")],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


# --------------------------------------------------------------------------------- the compiler
def test_functions_and_variables_defined_in_one_unit_serve_a_kernel_of_another(tmp_path):
    if libdevice.path() is None:
        pytest.skip("libdevice not installed")
    r = link(objects(HELPERS, KERNEL, OTHER), use_cache=False, target=SM90)
    assert r.ok, r.log
    assert sorted(r.kernels) == ["k", "other"] and r.kernels["k"].address is None
    assert sorted(re.findall(r"\.visible \.entry (\w+)", r.ptx)) == ["k", "other"]
    # the helper is inlined, the variable is the module's initialised global data
    assert re.search(r"\.global \.align 4 \.b8 \S*offsets\S*\[12\] = \{7, 0, 0, 0, 8, 0, 0, 0, 9", r.ptx)
    assert ".visible .func" not in r.ptx and ".extern" not in r.ptx
    assert "offsets" in entry(r.ptx, "k")
    assert_device_only(r.ptx)
    assemble(r.ptx, tmp_path)


def test_objects_name_their_target():
    gpu, = objects(KERNEL)
    cpu, = objects(KERNEL, target=HOST)
    assert unpack_object(gpu, HOST) is None and unpack_object(cpu, HOST) is not None
    assert unpack_object(gpu, SM90)[0]["target"] == SM90.name
    assert unpack_object(gpu, nvptx_target("sm_80")) is None
    assert 'target triple = "nvptx64' in unpack_object(gpu, ANY_TARGET)[1]      # that target's module


def test_a_library_keeps_its_target_and_links_like_its_objects(tmp_path):
    helpers, kernel = objects(HELPERS, KERNEL)
    lib = link([helpers], "-create-library", target=SM90)
    assert lib.ok, lib.log
    assert unpack_object(lib.data, HOST) is None
    assert unpack_object(lib.data, SM90)[0]["kind"] == "library"
    whole = link([helpers, kernel], use_cache=False, target=SM90)
    through_library = link([lib.data, kernel], use_cache=False, target=SM90)
    assert through_library.ok, through_library.log
    assert through_library.ptx == whole.ptx
    # a library of libraries and objects, then the executable
    lib2 = link([lib.data, kernel], "-create-library", target=SM90)
    assert lib2.ok and sorted(k["name"] for k in unpack_object(lib2.data, SM90)[0]["kernels"]) == ["k"]
    again = link([lib2.data], use_cache=False, target=SM90)
    assert again.ok and again.ptx == whole.ptx


@pytest.mark.parametrize("options", ["", "-create-library"])
def test_objects_of_different_targets_are_never_linked(options):
    gpu = objects(HELPERS)[0]
    cpu = objects(KERNEL, target=HOST)[0]
    sm80 = objects(KERNEL, target=nvptx_target("sm_80"))[0]
    for inputs, target, wrong in (([gpu, cpu], SM90, [1]), ([gpu, sm80], SM90, [1]),
                                  ([gpu, cpu], HOST, [0]), ([gpu], HOST, [0]), ([cpu], SM90, [0])):
        r = link(inputs, options, use_cache=False, target=target)
        assert not r.ok
        lines = r.log.splitlines()
        assert len(lines) == len(wrong), r.log
        for i, line in zip(wrong, lines):
            assert line.startswith("error: input %d (a compiled object" % i), r.log
            assert "objects of different targets cannot be linked" in line
        assert "internal" not in r.log


def test_errors_of_a_target_link_are_reported_as_on_the_host():
    kernel, = objects(KERNEL)
    r = link([kernel], use_cache=False, target=SM90)
    assert not r.ok
    assert "error: undefined function 'scale'" in r.log and "error: undefined variable 'offsets'" in r.log
    helpers, = objects(HELPERS)
    twice = link([helpers, helpers, kernel], use_cache=False, target=SM90)
    assert not twice.ok and "defined in more than one input" in twice.log
    bad = link([helpers, kernel], "-no-such-link-option", target=SM90)
    assert not bad.ok and bad.invalid_options


def test_the_link_cache_is_keyed_by_target(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPLAT_CACHE_DIR", str(tmp_path))
    src = "__kernel void k(__global int *o) { o[get_global_id(0)] = 3; }\n"
    cpu = link(objects(src, target=HOST))
    gpu = link(objects(src), target=SM90)
    gpu80 = link(objects(src, target=nvptx_target("sm_80")), target=nvptx_target("sm_80"))
    assert gpu.ok and gpu80.ok and cpu.ok
    assert len({cpu.cache_key, gpu.cache_key, gpu80.cache_key}) == 3
    again = link(objects(src), target=SM90)
    assert again.timings.get("cached") and again.ptx == gpu.ptx and ".target sm_90" in again.ptx
    assert again.kernels["k"].address is None and ".target sm_80" in gpu80.ptx
    assert load_package(gpu.package) is None                    # PTX is never loaded as host code
    assert link(objects(src, target=HOST)).kernels["k"].address   # the host's entry: native code


# --------------------------------------------------------------------------------- Program objects
class StubDevice:
    """What Program reads of a device: its name and compiler target."""

    def __init__(self, name, compiler_target):
        self.name, self.compiler_target = name, compiler_target


class StubContext:
    def __init__(self, devices):
        self.devices = devices

    def retain(self):
        return self

    def release(self):
        pass


CPU = StubDevice("CPU", HOST)
GPU = StubDevice("GPU sm_90", SM90)
GPU2 = StubDevice("second GPU sm_90", SM90)
CTX = StubContext([CPU, GPU, GPU2])


def compiled(source, devices=(CPU, GPU, GPU2)):
    p = Program(CTX, source)
    r = p.compile(list(devices), "", [])
    assert r.ok, r.log
    return p


def test_compile_makes_one_object_per_target_and_link_one_executable_per_target():
    helpers, kernel = compiled(HELPERS), compiled(KERNEL)
    assert list(helpers.device_objects) == [SM90] and helpers.ir_object is not None
    assert helpers.binary_type == cl.CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT
    p = Program(CTX, "", devices=[CPU, GPU, GPU2])
    r = p.link([CPU, GPU, GPU2], "", [helpers, kernel])
    assert r.ok, r.log
    assert all(p.built_for(d) for d in (CPU, GPU, GPU2))
    assert p.kernel_names == ["k"]
    gpu = p.device_result(GPU)                 # what core/kernel.py device_launch launches
    assert gpu is p.device_result(GPU2) and ".entry k(" in gpu.ptx and gpu.kernels["k"].symbol == "k"
    assert p.device_result(CPU) is p.result and p.result.kernels["k"].address


def test_a_library_per_target_then_an_executable():
    helpers, kernel = compiled(HELPERS), compiled(KERNEL)
    lib = Program(CTX, "", devices=[CPU, GPU])
    r = lib.link([CPU, GPU], "-create-library", [helpers])
    assert r.ok, r.log
    assert lib.binary_type == cl.CL_PROGRAM_BINARY_TYPE_LIBRARY and list(lib.device_objects) == [SM90]
    exe = Program(CTX, "", devices=[CPU, GPU])
    r = exe.link([CPU, GPU], "", [lib, kernel])
    assert r.ok, r.log
    assert exe.built_for(GPU) and ".entry k(" in exe.device_result(GPU).ptx


def test_an_input_without_the_targets_object_fails_the_link_for_that_device():
    helpers, kernel = compiled(HELPERS, [CPU]), compiled(KERNEL)
    assert helpers.device_objects == {}
    p = Program(CTX, "", devices=[CPU, GPU])
    r = p.link([CPU, GPU], "", [helpers, kernel])
    assert not r.ok                             # clLinkProgram: CL_LINK_PROGRAM_FAILURE
    assert p.status[GPU] == cl.CL_BUILD_ERROR and not p.built_for(GPU) and p.device_result(GPU) is None
    assert p.status[CPU] == cl.CL_BUILD_SUCCESS and p.built_for(CPU)
    line = p.log[GPU].splitlines()[0]
    assert line.startswith("error: input 0 has no compiled object for GPU sm_90") and "clCompileProgram" in line
    assert "error" not in p.log[CPU]
    # an input made from a program binary (its bytes are the host's object only)
    from_binary = Program(CTX, binary_options="", devices=[CPU, GPU], **{
        k: v for k, v in Program.parse_binary(kernel.binary()).items() if k in ("ir_object", "binary_type")})
    q = Program(CTX, "", devices=[CPU, GPU])
    assert not q.link([CPU, GPU], "", [compiled(HELPERS), from_binary]).ok
    assert "error: input 1 has no compiled object" in q.log[GPU] and q.built_for(CPU)


def test_a_device_whose_compile_fails_fails_the_compile_alone():
    src = '__kernel void k(__constant char *s) { printf("%s", s); }\n'    # %s of a non-literal
    p = Program(CTX, src)
    r = p.compile([CPU, GPU], "", [])
    assert not r.ok and "must be a string literal on this device" in r.log
    assert p.status[CPU] == cl.CL_BUILD_SUCCESS and p.status[GPU] == cl.CL_BUILD_ERROR
    assert p.device_objects == {} and p.ir_object is not None


def test_each_devices_binary_of_an_object_links_for_that_device():
    """CL_PROGRAM_BINARIES of a compiled object: the host's object for the CPU, the host's and
    its target's for a GPU; programs made from them link for every device."""
    kernel = compiled(KERNEL, [CPU, GPU])
    cpu_bin, gpu_bin = kernel.binary(CPU), kernel.binary(GPU)
    assert cpu_bin == kernel.ir_object and gpu_bin != cpu_bin
    cpu_parsed, gpu_parsed = Program.parse_binary(cpu_bin), Program.parse_binary(gpu_bin)
    assert cpu_parsed.get("object_target") is None and gpu_parsed["object_target"] == SM90.name
    assert gpu_parsed["ir_object"] == kernel.ir_object and gpu_parsed["device_object"] == kernel.device_objects[SM90]
    assert Program.parse_binary(gpu_bin[:-1] + bytes([gpu_bin[-1] ^ 1])) is None       # every byte checked
    from_binary = Program(CTX, binary_options="", devices=[CPU, GPU], ir_object=gpu_parsed["ir_object"],
                          binary_type=gpu_parsed["binary_type"], device_objects={SM90: gpu_parsed["device_object"]})
    p = Program(CTX, "", devices=[CPU, GPU])
    r = p.link([CPU, GPU], "", [compiled(HELPERS, [CPU, GPU]), from_binary])
    assert r.ok, r.log
    assert p.built_for(CPU) and p.built_for(GPU) and ".entry k(" in p.device_result(GPU).ptx
    assert compiled(HELPERS, [CPU]).binary(GPU) == b""       # no object of that target: no binary


def test_building_an_object_binary_for_a_gpu_says_it_holds_host_code_only():
    kernel = compiled(OTHER, [CPU])
    b = Program.parse_binary(kernel.binary())
    p = Program(CTX, binary_options="", devices=[CPU, GPU], ir_object=b["ir_object"],
                binary_type=b["binary_type"])
    r = p.build([CPU, GPU], "")
    assert not r.ok and p.built_for(CPU) and not p.built_for(GPU)
    assert "holds host code only" in p.log[GPU]
