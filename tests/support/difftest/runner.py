"""Build and run batches of generated programs on two platforms and compare their outputs.

A batch is many programs (each its own kernel, helpers and macros, named by its prefix) in ONE
cl_program, built once per platform with one included header (-I a temporary directory): the
build cost is shared, the programs stay independent. Counting: programs, builds and mismatches
are counted separately (see docs/differential.md).
"""
import os
import tempfile
from pathlib import Path

import numpy as np

from .generator import NIN, SLOTS, WG, Options, generate

GLOBAL = 32                      # work-items per program (4 work-groups of WG)
HEADER = "difftest_batch.h"
OPTIONS = "-cl-fp32-correctly-rounded-divide-sqrt"
PYPLAT, POCL = "PyPlat", "Portable Computing Language"


def inputs(seed):
    """The input buffer: random bits mixed with edge values of every type."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 2**64, NIN, dtype=np.uint64, endpoint=False)
    edges = [0, 1, 2**64 - 1, 2**63, 2**63 - 1, 2**31, 2**31 - 1, 2**32 - 1, 0x80, 0x7f, 0xff,
             0x8000, 0x7fff, 0xffff, 0x7f800000, 0xff800000, 0x7fc00000, 0x00000001, 0x3f800000,
             0x80000000, 0x7ff0000000000000, 0x7ff8000000000000, 0x8000000000000000, 1 << 52,
             0x00800000, 0x4b000001, 0x3effffff, 0xbf000000]
    for k, e in enumerate(edges):
        x[(k * 9) % NIN] = e
    return x


def batch_source(programs, base=0):
    """(program text, header text) of programs in one cl_program; program i writes slots from
    (base + i) * GLOBAL * SLOTS."""
    head = ["#pragma OPENCL FP_CONTRACT OFF", "#pragma OPENCL EXTENSION cl_khr_fp64 : enable",
            f'#include "{HEADER}"', ""]
    body = [p.kernel_source((base + i) * GLOBAL * SLOTS) for i, p in enumerate(programs)]
    # One kernel calls every program's entry in turn: PoCL compiles a work-group function per
    # kernel at its first launch, which costs more than the whole build; one kernel per batch
    # makes that once. Programs share nothing but the input buffer and the __local scratch
    # (each reduction ends with a barrier before the next program touches it).
    body.append(f"__kernel __attribute__((reqd_work_group_size({WG}, 1, 1)))\n"
                "void difftest_batch(__global const ulong *in, __global ulong *out)\n{\n"
                f"    __local ulong lm[{WG}];\n" +
                "".join(f"    {p.prefix}k(in, out, lm);\n" for p in programs) + "}\n")
    header = ["#ifndef DIFFTEST_BATCH_H", "#define DIFFTEST_BATCH_H"]
    for p in programs:
        header += p.header
    header.append("#endif")
    return "\n".join(head) + "\n".join(body), "\n".join(header) + "\n"


class Device:
    """One platform's context and queue (pyopencl), by platform name."""

    def __init__(self, platform_name, extra_options=""):
        import pyopencl as cl
        self.cl = cl
        plats = [p for p in cl.get_platforms() if p.name == platform_name]
        if not plats:
            raise LookupError(f"no OpenCL platform named {platform_name!r}")
        self.name, self.extra = platform_name, extra_options
        self.ctx = cl.Context(plats[0].get_devices()[:1])
        self.queue = cl.CommandQueue(self.ctx)
        self.fp64 = "cl_khr_fp64" in self.ctx.devices[0].extensions

    def run(self, source, header, kernels, in_host, nout):
        """Build source (header beside it) and run each kernel over GLOBAL work-items.
        Returns (outputs or None, build log or '')."""
        cl = self.cl
        with tempfile.TemporaryDirectory(prefix="difftest") as tmp:
            Path(tmp, HEADER).write_text(header)
            prg = cl.Program(self.ctx, source)
            try:
                prg.build(options=f"{OPTIONS} {self.extra} -I {tmp}")
            except cl.RuntimeError as e:
                return None, str(e)
        mf = cl.mem_flags
        inb = cl.Buffer(self.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=in_host)
        out = np.zeros(nout, dtype=np.uint64)
        outb = cl.Buffer(self.ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=out)
        for k in kernels:
            getattr(prg, k)(self.queue, (GLOBAL,), (WG,), inb, outb)
        cl.enqueue_copy(self.queue, out, outb)
        self.queue.finish()
        return out, ""


def default_devices():
    import pyplat
    pyplat.enable()
    # PoCL with its default optimisation: unoptimised (-cl-opt-disable) it is twice as fast but
    # PoCL 3.1 then crashes (SIGSEGV) on some programs (seed 4000668, docs/differential.md)
    return Device(PYPLAT), Device(POCL)


class Result:
    def __init__(self):
        self.programs = self.builds = 0
        self.mismatches = []     # dicts: seed, kind, source, header, outputs
        self.invalid = []        # seeds both platforms rejected (generator bugs)


def run_programs(programs, devs, in_host, res):
    """Run programs as one batch on both devices; bisect when a build fails."""
    src, hdr = batch_source(programs)
    nout = len(programs) * GLOBAL * SLOTS
    kernels = ["difftest_batch"]
    outs = []
    for d in devs:
        o, log = d.run(src, hdr, kernels, in_host, nout)
        res.builds += 1
        outs.append((o, log))
    (a, loga), (b, logb) = outs
    if a is None or b is None:
        if len(programs) > 1:
            half = len(programs) // 2
            run_programs(programs[:half], devs, in_host, res)
            run_programs(programs[half:], devs, in_host, res)
            return
        p = programs[0]
        if a is None and b is None:
            res.invalid.append({"seed": p.seed, "log": loga[-4000:], "source": src,
                                "header": hdr})
        else:
            res.mismatches.append({"seed": p.seed, "kind": "build", "source": src,
                                   "header": hdr, "logs": [loga[-4000:], logb[-4000:]]})
        res.programs += 1
        return
    per = GLOBAL * SLOTS
    for i, p in enumerate(programs):
        x, y = a[i * per:(i + 1) * per], b[i * per:(i + 1) * per]
        res.programs += 1
        if not np.array_equal(x, y):
            one_src, one_hdr = batch_source([p])
            diff = np.nonzero(x != y)[0]
            res.mismatches.append({
                "seed": p.seed, "kind": "output", "source": one_src, "header": one_hdr,
                "first": [(int(k // SLOTS), int(k % SLOTS), int(x[k]), int(y[k]))
                          for k in diff[:8]]})


def options_for(devs):
    return Options(fp64=all(d.fp64 for d in devs))


def run_seeds(seeds, devs, batch=50, opts=None, in_seed=12345):
    """Generate the programs of these seeds, run them in batches; returns a Result."""
    opts = opts or options_for(devs)
    res = Result()
    in_host = inputs(in_seed)
    seeds = list(seeds)
    for k in range(0, len(seeds), batch):
        progs = [generate(s, f"p{s}_", opts) for s in seeds[k:k + batch]]
        run_programs(progs, devs, in_host, res)
    return res


def save(mismatch, directory, tag=""):
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    stem = d / f"{tag}seed{mismatch['seed']}_{mismatch['kind']}"
    Path(f"{stem}.cl").write_text(mismatch["source"])
    Path(f"{stem}.h").write_text(mismatch["header"])
    info = {k: v for k, v in mismatch.items() if k not in ("source", "header")}
    Path(f"{stem}.txt").write_text(repr(info) + "\n")
    return stem


__all__ = ["run_seeds", "default_devices", "Device", "batch_source", "inputs", "save", "os"]
