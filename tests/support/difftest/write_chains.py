"""In-order chains after kernels that write through derived pointers (writes.py): the proof that
the in-order queue's parallelisation never lets a command see stale data.

Each generated kernel runs on PyPlat's automatic in-order queue followed at once by a random
chain of commands on its output (blocking and non-blocking reads, copies, maps, a kernel reading
it, fills and writes over it), and the same on a serial in-order queue of the same context (a
profiling queue: the mode PYPLAT_INORDER_PARALLEL=0 gives every queue). Two oracles:

- the chain's results and the buffers' final contents must be equal on both queues (and on PoCL
  when it is compared too);
- the compiler's answer must cover what the kernel did: an argument whose buffer the serial run
  shows changed must have `written` set (the KernelInfo of the program the queue ran, what the queue
  uses). The second oracle does not depend on timing: it finds an unsound answer even when no
  race happens to show it.
"""
import numpy as np

from .writes import GLOBAL, N, WG, generate

CHAIN_STEPS = ("read", "read_nb", "copy", "map", "kernel", "fill", "write")
READER = ("__kernel void wc_reader(__global uint *d, __global const uint *s)\n"
          "{ size_t i = get_global_id(0); d[i] = s[i] * 3u + 1u; }\n")
ARGS = ("a", "b", "c", "src")


def sentinel(k):
    return (np.arange(N, dtype=np.uint32) * np.uint32(2654435761)) ^ np.uint32(0xA5A5A5A5 + k)


def batch_source(kernels):
    return READER + "\n".join(k.source() for k in kernels)


class Platform:
    """One platform's context, an automatic in-order queue and a serial one (pyopencl)."""

    def __init__(self, cl, platform):
        self.cl = cl
        self.ctx = cl.Context(platform.get_devices()[:1])
        self.queue = cl.CommandQueue(self.ctx)
        self.serial = cl.CommandQueue(
            self.ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
        mf = cl.mem_flags
        self.bufs = {n: cl.Buffer(self.ctx, mf.READ_WRITE, N * 4) for n in ARGS + ("d",)}
        self.src_host = np.random.default_rng(7).integers(0, 2**32, N, dtype=np.uint32)

    def build(self, source):
        return self.cl.Program(self.ctx, source).build()

    def run(self, q, prg, kernel, chain, truth):
        """The chain on queue q; returns the list of arrays it read (truth: the four arguments
        read right after the kernel, first)."""
        cl, b = self.cl, self.bufs
        for k, n in enumerate(ARGS):
            host = self.src_host if n == "src" else sentinel(k)
            cl.enqueue_copy(q, b[n], host, is_blocking=False)
        self.cl.Kernel(prg, kernel.prefix + "k")(q, (GLOBAL,), (WG,), b["a"], b["b"], b["c"], b["src"])
        out = []
        if truth:
            for n in ARGS:
                h = np.empty(N, np.uint32)
                cl.enqueue_copy(q, h, b[n])
                out.append(h)
        pending = []
        for at, (step, target) in enumerate(chain):
            buf = b[target]
            h = np.empty(N, np.uint32)
            if step == "read":
                cl.enqueue_copy(q, h, buf)
            elif step == "read_nb":
                pending.append((cl.enqueue_copy(q, h, buf, is_blocking=False), h))
                continue
            elif step == "copy":
                cl.enqueue_copy(q, b["d"], buf)
                cl.enqueue_copy(q, h, b["d"])
            elif step == "map":
                m, _ = cl.enqueue_map_buffer(q, buf, cl.map_flags.READ, 0, (N,), np.uint32)
                h[:] = m
                m.base.release(q)
            elif step == "kernel":
                self.cl.Kernel(prg, "wc_reader")(q, (N,), None, b["d"], buf)
                cl.enqueue_copy(q, h, b["d"])
            elif step == "fill":
                cl.enqueue_fill_buffer(q, buf, np.uint32(0x5EED0000 + at), 0, N * 4)
                cl.enqueue_copy(q, h, buf)
            elif step == "write":
                cl.enqueue_copy(q, buf, sentinel(at + 9), is_blocking=False)
                cl.enqueue_copy(q, h, buf)
            out.append(h)
        for ev, h in pending:
            ev.wait()
            out.append(h)
        for n in ARGS:
            h = np.empty(N, np.uint32)
            cl.enqueue_copy(q, h, b[n])
            out.append(h)
        q.finish()
        return out


def chain_for(kernel, rng):
    """1-3 commands, mostly on what the kernel wrote."""
    steps = []
    for _ in range(int(rng.integers(1, 4))):
        target = kernel.writes[int(rng.integers(len(kernel.writes)))] if rng.random() < 0.85 \
            else ("c" if rng.random() < 0.5 else "src")
        steps.append((CHAIN_STEPS[int(rng.integers(len(CHAIN_STEPS)))], target))
    return steps


class Result:
    def __init__(self):
        self.kernels = self.builds = self.chains = 0
        self.stale = []            # (seed, chain, what differed)
        self.unsound = []          # (seed, argument written but reported unwritten)
        self.pocl_mismatch = []    # (seed, what differed)
        self.readonly_args = 0     # c/src arguments reported unwritten (the analysis' precision)


def kernel_infos(prg):
    """name -> KernelInfo of a program pyopencl built on PyPlat: the compiler's answers that its
    queues use (the core Program behind the handle)."""
    from pyplat.api import handles
    return handles.adopted(prg.int_ptr).result.kernels


def run_seeds(seeds, pyplat_platform, pocl_platform=None, batch=40, chain_seed=0):
    """Generate kernels for these seeds, run their chains; returns a Result."""
    res = Result()
    rng = np.random.default_rng(chain_seed)
    seeds = list(seeds)
    for k in range(0, len(seeds), batch):
        kernels = [generate(s, f"w{s}_") for s in seeds[k:k + batch]]
        source = batch_source(kernels)
        prg = pyplat_platform.build(source)
        infos = kernel_infos(prg)
        pprg = pocl_platform.build(source) if pocl_platform is not None else None
        res.builds += 1
        for kern, seed in zip(kernels, seeds[k:k + batch]):
            chain = chain_for(kern, rng)
            serial = pyplat_platform.run(pyplat_platform.serial, prg, kern, chain, truth=True)
            auto = pyplat_platform.run(pyplat_platform.queue, prg, kern, chain, truth=False)
            res.kernels += 1
            res.chains += 1
            for i, (x, y) in enumerate(zip(serial[4:], auto)):
                if not np.array_equal(x, y):
                    res.stale.append((seed, chain, i, int(np.count_nonzero(x != y))))
                    break
            written = {a.name: a.written for a in infos[kern.prefix + "k"].args}
            for j, name in enumerate(ARGS):
                before = pyplat_platform.src_host if name == "src" else sentinel(j)
                if not np.array_equal(serial[j], before) and not written[name]:
                    res.unsound.append((seed, name))
                if name in ("c", "src") and not written[name]:
                    res.readonly_args += 1
            if pprg is not None:
                other = pocl_platform.run(pocl_platform.serial, pprg, kern, chain, truth=True)
                for i, (x, y) in enumerate(zip(serial, other)):
                    if not np.array_equal(x, y):
                        res.pocl_mismatch.append((seed, i, int(np.count_nonzero(x != y))))
                        break
    return res
