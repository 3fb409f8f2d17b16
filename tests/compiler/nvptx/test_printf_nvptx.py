"""printf on NVPTX (targets/nvptx/printf.py, devices/cuda/printf_output.py), offline: the PTX
appends records to the module's printf buffer with an atomic add (no host calls), the build
result carries the format table, and the host's formatting of records gives the bytes the CPU
device prints for the same printf calls."""
import re
import struct
import subprocess

import numpy as np
import pytest

from pyplat.compiler import build, read_package
from pyplat.compiler.targets.nvptx import abi
from pyplat.devices.cuda import printf_output
from support.compiled import run
from support.nvptx import SM90, assert_device_only, find_ptxas, ptx_of


def f32(x):
    return float(np.float32(x))


# (format, arguments, the values a record holds for them, in order)
CALLS = [
    (r'"%d %i|%5u|%-4x|%#o|%+.3e|%g|%a|%c|%%|%05d\n"', "-7, 42, 7u, 255, 8, 1234.5f, 0.1f, 1.0f, 'A', -42",
     [-7, 42, 7, 255, 8, 1234.5, f32(0.1), 1.0, 65, -42]),
    (r'"%ld|%lu|%lx|%hd|%hhu|%hhx|%.3f\n"',
     "-1L << 40, 18446744073709551615ul, 0x123456789abcdefl, (short)-7, (uchar)200, (char)-1, 2.0 / 3.0",
     [-(1 << 40), (1 << 64) - 1, 0x123456789abcdef, -7, 200, -1, 2.0 / 3.0]),
    (r'"%v4f|%v2hd|%#v3hhx|%v2hli|%v2lx|%.1v2lf|%v2hlg\n"',
     "(float4)(1.5f, -2, 0.25f, 1e10f), (short2)(-3, 4), (uchar3)(10, 11, 255), (int2)(-1, 2), "
     "(ulong2)(1, 0xffffffffffful), (double2)(0.25, -1.75), (float2)(INFINITY, NAN)",
     [1.5, -2.0, 0.25, f32(1e10), -3, 4, 10, 11, 255, -1, 2, 1, 0xfffffffffff, 0.25, -1.75,
      float("inf"), float("nan")]),
    (r'"[%s][%-6.2s][%8s][%.0s][%5c]\n"', '"str", "abc", "50%", "gone", \'z\'', [ord("z")]),
    (r'"%p|%%d\n"', "(__global void *)0", [0]),
    (r'"no values\n"', "", []),
]
SOURCE = "__kernel void k(void) {\n%s}\n" % "".join(
    "    printf(%s%s);\n" % (fmt, ", " + args if args else "") for fmt, args, _ in CALLS)
PACK = {"i": lambda v: struct.pack("<Q", v & 0xFFFFFFFF), "l": lambda v: struct.pack("<Q", v & (1 << 64) - 1),
        "d": lambda v: struct.pack("<d", v), "p": lambda v: struct.pack("<Q", v)}


def record(fid, kinds, values):
    assert len(kinds) == len(values)
    body = b"".join(PACK[k](v) for k, v in zip(kinds, values))
    return struct.pack("<II", fid, 8 + len(body)) + body


def buffer(records, cursor=None):
    data = b"".join(records)
    return struct.pack("<Q", len(data) if cursor is None else cursor) + data


@pytest.fixture(scope="module")
def gpu():
    return ptx_of(SOURCE)


def gpu_records(gpu):
    """The records the GPU writes for CALLS, in call order (every format is different)."""
    formats = gpu.printf_formats
    assert len(formats) == len(CALLS)
    return [record(fid, kinds, values) for (fid, (_, kinds)), (_, _, values) in zip(formats.items(), CALLS)]


def test_ptx_appends_records_with_an_atomic_add_and_calls_nothing(gpu):
    ptx = gpu.ptx
    assert re.search(r"\.visible \.global \.align 8 \.b8 %s\[%d\];" % (abi.PRINTF_SYMBOL, abi.PRINTF_BUFFER_BYTES),
                     ptx)
    assert ptx.count("atom.global.add.u64") == len(CALLS)
    assert "snprintf" not in ptx and "write" not in ptx
    assert_device_only(ptx)


def test_ptxas_assembles_printf(gpu, tmp_path):
    ptxas = find_ptxas()
    if ptxas is None:
        pytest.skip("ptxas not installed (pip install nvidia-cuda-nvcc-cu12)")
    for name, options in (("printf", ""), ("printf_O0", "-cl-opt-disable")):
        path = tmp_path / (name + ".ptx")
        path.write_text(gpu.ptx if not options else ptx_of(SOURCE, options).ptx)
        p = subprocess.run([ptxas, "-arch=sm_90", str(path), "-o", str(tmp_path / (name + ".cubin"))],
                           capture_output=True, text=True)
        assert p.returncode == 0, p.stderr


def test_format_table_has_the_c_formats_and_value_kinds(gpu):
    assert list(gpu.printf_formats.values()) == [
        ("%d %i|%5u|%-4x|%#o|%+.3e|%g|%a|%c|%%|%05d\n", "iiiiidddii"),
        ("%ld|%lu|%lx|%hd|%hhu|%hhx|%.3f\n", "llliiid"),
        ("%f,%f,%f,%f|%hd,%hd|%#hhx,%#hhx,%#hhx|%i,%i|%lx,%lx|%.1f,%.1f|%g,%g\n", "ddddiiiiiiillddd" + "d"),
        ("[str][ab    ][     50%%][][%5c]\n", "i"),
        ("%p|%%d\n", "p"),
        ("no values\n", ""),
    ]
    assert all(isinstance(i, int) and 0 <= i < 1 << 32 for i in gpu.printf_formats)
    assert ptx_of("__kernel void k(__global int *o) { o[0] = 1; }").printf_formats == {}


def test_records_print_what_the_cpu_prints(gpu, capfdbinary):
    cpu = build(SOURCE, use_cache=False)
    assert cpu.ok, cpu.log
    run(cpu.kernels["k"], [], (1,), (1,))
    expected = capfdbinary.readouterr().out
    assert expected.startswith(b"-7 42|    7|ff  |010|+1.234e+03|0.1|0x1p+0|A|%|-0042\n")
    assert b"[str][ab    ][     50%][][    z]\n(nil)|%d\nno values\n" in expected
    assert printf_output.format_records(buffer(gpu_records(gpu)), gpu.printf_formats) == expected


def test_pointers_print_their_address():
    formats = {7: ("%p|%5p\n", "pp")}
    assert printf_output.format_records(buffer([record(7, "pp", [0x1234, 0])]), formats) == b"0x1234|(nil)\n"


def test_drain_reads_the_cursor_then_the_records(gpu):
    data = bytearray(buffer(gpu_records(gpu)) + bytes(64))
    reads = []

    def read_bytes(offset, n):
        reads.append((offset, n))
        return bytes(data[offset:offset + n])
    text = printf_output.drain(read_bytes, gpu.printf_formats)
    assert text.endswith(b"no values\n") and reads == [(0, 8), (8, len(data) - 64 - 8)]
    assert printf_output.drain(lambda offset, n: bytes(n), gpu.printf_formats) == b""


def test_full_cut_short_and_malformed_buffers():
    formats = {1: ("<%d>\n", "i"), 2: ("%ld %f\n", "ld")}
    one, two = record(1, "i", [-5]), record(2, "ld", [1 << 40, 0.5])
    # records that did not fit: the cursor counts past the capacity, they were not stored
    full = buffer([one, two], cursor=len(one + two) + 100)
    out = printf_output.format_records(full, formats, capacity=8 + len(one + two) + 8)
    assert out.startswith(b"<-5>\n1099511627776 0.500000\n") and b"printf buffer (56 bytes) is full" in out
    # a copy cut short stops before the record it cuts
    assert printf_output.format_records(buffer([one, two])[:-1], formats) == b"<-5>\n"
    assert printf_output.format_records(b"\x10", formats) == b""
    # a malformed record (size 0, or not what its format holds) stops the output there
    assert printf_output.format_records(buffer([one, struct.pack("<II", 1, 0), one]), formats) == b"<-5>\n"
    assert printf_output.format_records(buffer([one, record(2, "i", [1])]), formats) == b"<-5>\n"
    # an unknown id is said, and the records after it still print
    out = printf_output.format_records(buffer([record(99, "i", [1]), one]), formats)
    assert out == b"[pyplat: unknown printf format id 0x00000063]\n<-5>\n"


def test_printf_returns_minus_one_when_the_record_does_not_fit():
    ptx = ptx_of("__kernel void k(__global int *o) { o[0] = printf(\"%d\\n\", o[1]); }").ptx
    last = abi.PRINTF_BUFFER_BYTES - 8 - 16          # the last offset where a 16-byte record fits
    assert re.search(r"setp\.\w+\.u64\s+%%p\d+, %%rd\d+, (%d|%d);" % (last, last + 1), ptx)
    assert re.search(r"selp\.b32\s+%r\d+, (-1, 0|0, -1),", ptx)


def test_non_literal_strings_are_refused_on_the_gpu_and_printed_on_the_cpu():
    src = '__kernel void k(__constant char *s) { printf("%s\\n", s); }'
    r = build(src, use_cache=False, target=SM90)
    assert not r.ok and "printf: the argument of %s must be a string literal" in r.log
    assert "internal" not in r.log
    assert build(src, use_cache=False).ok


def test_format_table_survives_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPLAT_CACHE_DIR", str(tmp_path))
    first = build(SOURCE, target=SM90)
    again = build(SOURCE, target=SM90)
    assert again.timings.get("cached") and again.printf_formats == first.printf_formats != {}
    meta, payload = read_package(first.package)
    del meta["printf_formats"]                   # as in a cache entry made before printf
    assert SM90.from_package_parts(meta, payload).printf_formats == {}
