"""Random API call sequences checked against a shadow model (issue 13 part 2, component b).

A sequence (one seed) creates buffers (with and without host memory, sub-buffers), writes, reads,
copies, fills, maps and unmaps them, launches a few fixed kernels of known arithmetic, on in-order
and out-of-order queues with random wait lists, user events that complete or fail at random later
points, markers and barriers, and every so often a checkpoint: every user event is set, every
queue finished, and everything compared with the model:

- every buffer's contents (the model applies each command when it is enqueued: conflicting
  commands are always ordered, by their in-order queue or by explicit wait lists, so the order of
  enqueueing is the order of execution for every byte);
- every read's host memory (what the buffer held when the read was enqueued, or untouched when
  the read failed);
- every event's final status. The rule (docs/runtime.md "When a command fails"): a command fails
  iff its own wait list holds a failed event (a user event set to an error, or a failed command);
  an in-order queue's order, markers and barriers without wait lists never pass failure on.

The fate of each user event (complete or which error) is drawn when it is created, so the model
knows every command's outcome when it is enqueued. Nothing may block on a user event not yet set:
blocking calls and clFinish are used only where nothing unresolved is upstream.

Several host threads (`threads`) run sequences on one context at once, each on its own queues and
buffers, and put events of the other threads into their wait lists.
"""
import ctypes
import random
import threading

import numpy as np

from support.fuzz_sweep import C, E, Platform, child_lines

KERNELS = b"""
__kernel void add_const(__global uint *a, uint c) { size_t i = get_global_id(0); a[i] += c; }
__kernel void axpy(__global uint *y, __global const uint *x, uint k)
{ size_t i = get_global_id(0); y[i] = k * x[i] + y[i]; }
__kernel void mul_idx(__global uint *a) { size_t i = get_global_id(0); a[i] = a[i] * 3u + (uint)i; }
"""
FAILED = E.CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
EVENT_CALLBACK = ctypes.CFUNCTYPE(None, C, ctypes.c_int32, C)


class Stats:
    def __init__(self):
        self.calls = self.launches = self.wrong_codes = self.wrong_results = self.wrong_status = 0
        self.problems = []
        self.lock = threading.Lock()

    def add(self, other):
        for k in ("calls", "launches", "wrong_codes", "wrong_results", "wrong_status"):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        self.problems += other.problems


class Ev:
    """An event and what the model expects of it."""

    def __init__(self, handle, failed, deps, queue=None, user=False, fate=0):
        self.h, self.failed, self.deps, self.queue, self.user, self.fate = handle, failed, deps, queue, user, fate
        self.set = not user
        self.order = []              # what the queue makes it wait for: order only, never failure
        self.resolved = False

    def unresolved(self):
        """Some user event upstream (through wait lists or queue order) is not set yet."""
        if self.resolved:
            return False
        stack, seen = [self], set()
        while stack:
            e = stack.pop()
            if e.resolved or id(e) in seen:
                continue
            seen.add(id(e))
            if e.user and not e.set:
                return True
            stack.extend(e.deps)
            stack.extend(e.order)
        self.resolved = True         # user events are never unset: resolved stays resolved
        return False


class Buf:
    def __init__(self, handle, size, root=None, offset=0):
        self.h, self.size, self.offset = handle, size, offset
        self.root = root or self
        if root is None:
            self.shadow = np.zeros(size, np.uint8)
            self.writer, self.readers = None, []

    def view(self):
        return self.root.shadow[self.offset:self.offset + self.size]


class Queue:
    def __init__(self, handle, in_order):
        self.h, self.in_order, self.events, self.barrier = handle, in_order, [], None


class Model:
    """One sequence on one context: its own queues, buffers, kernels and events."""

    def __init__(self, p, ctx, dev, prog, rng, stats, pool=None, trace=None, align=128):
        self.p, self.ctx, self.dev, self.rng, self.st = p, ctx, dev, rng, stats
        self.pool = pool                    # events shared with other threads: (lock, list)
        self.trace = trace if trace is not None else []
        self.err = ctypes.c_int32()
        self.keep, self.bufs, self.events, self.reads, self.users = [], [], [], [], []
        self.callbacks = []
        self.bufkeep = []                   # host memory of CL_MEM_USE_HOST_PTR buffers, for their lifetime
        self.align = align
        self.seed = None
        self.queues = [Queue(self.new("clCreateCommandQueue", ctx, dev, 0), True),
                       Queue(self.new("clCreateCommandQueue", ctx, dev, 0), True)]
        ooo = self.p.clCreateCommandQueue(ctx, dev, E.CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, ctypes.byref(self.err))
        if ooo:
            self.queues.append(Queue(ooo, False))
        self.kernels = {n: self.new("clCreateKernel", prog, n.encode()) for n in ("add_const", "axpy", "mul_idx")}

    # ---- calls -------------------------------------------------------------------------------------
    def call(self, name, *args, expect=0):
        self.st.calls += 1
        self.trace.append((name, args))
        code = getattr(self.p, name)(*args)
        if code != expect:
            self.problem("wrong_codes", f"{name} gave {code}, expected {expect}")
        return code

    def new(self, name, *args):
        """A creator: the object, errcode_ret checked."""
        self.st.calls += 1
        self.trace.append((name, args))
        self.err.value = 12345
        h = getattr(self.p, name)(*args, ctypes.byref(self.err))
        if self.err.value != 0 or not h:
            self.problem("wrong_codes", f"{name} gave {self.err.value}")
        return h

    def problem(self, kind, text):
        setattr(self.st, kind, getattr(self.st, kind) + 1)
        self.st.problems.append(f"{kind}: {text} (at call {len(self.trace)}, seed {self.seed})")

    def host(self, data):
        m = (ctypes.c_uint8 * data.nbytes).from_buffer_copy(data.tobytes())
        self.keep.append(m)
        return m

    # ---- ordering ------------------------------------------------------------------------------------
    def _waits(self, q, bufs_read, bufs_written):
        """The explicit wait list: the conflicting commands on other queues (or an out-of-order
        one), some at random on the same in-order queue, and a few random events."""
        need = []
        for b in bufs_read + bufs_written:
            r = b.root
            deps = ([r.writer] if r.writer else []) + (r.readers if b in bufs_written else [])
            for d in deps:
                if d.queue is not q or not q.in_order or self.rng.random() < 0.2:
                    need.append(d)
        extra = self.events + self.users
        if self.pool is not None and self.rng.random() < 0.5:
            with self.pool[0]:
                extra = extra + self.pool[1][-20:]
        for _ in range(self.rng.choice((0, 0, 1, 2))):
            if extra:
                need.append(self.rng.choice(extra))
        uniq = list({id(e): e for e in need}.values())
        return uniq

    def _wait_args(self, waits):
        if not waits:
            return 0, None
        arr = (C * len(waits))(*[e.h for e in waits])
        self.keep.append(arr)
        return len(waits), arr

    def _done(self, q, h, waits, reads, writes, after_all=False):
        failed = any(e.failed for e in waits)
        ev = Ev(h.value, failed, waits, q)
        if after_all:                  # waits for every earlier command of the queue: order only
            ev.order = list(q.events)
        elif q.in_order and q.events:
            ev.order = [q.events[-1]]
        elif q.barrier:
            ev.order = [q.barrier]
        q.events.append(ev)
        self.events.append(ev)
        for b in writes:
            b.root.writer, b.root.readers = ev, []
        for b in reads:
            if b not in writes:
                b.root.readers.append(ev)
        if self.pool is not None:
            with self.pool[0]:
                self.pool[1].append(ev)
        return ev

    def enqueue(self, name, q, args_before, reads=(), writes=(), args_after=()):
        reads, writes = list(reads), list(writes)
        waits = self._waits(q, reads, writes)
        n, lst = self._wait_args(waits)
        h = C()
        self.call(name, q.h, *args_before, n, lst, ctypes.byref(h), *args_after)
        return self._done(q, h, waits, reads, writes)

    # ---- operations ------------------------------------------------------------------------------
    def op_create(self):
        size = self.rng.choice((64, 256, 1024))
        data = np.frombuffer(self.rng.randbytes(size), np.uint8).copy()
        how = self.rng.choice(("copy", "use", "none"))
        if how == "none":
            h = self.new("clCreateBuffer", self.ctx, E.CL_MEM_READ_WRITE, size, None)
            b = Buf(h, size)
            self.bufs.append(b)
            pattern = self.host(np.array([self.rng.randrange(256)], np.uint8))
            ev = self.enqueue("clEnqueueFillBuffer", self.rng.choice(self.queues), [b.h, pattern, 1, 0, size],
                              writes=[b])
            if not ev.failed:
                b.shadow[:] = pattern[0]
            return
        flag = E.CL_MEM_COPY_HOST_PTR if how == "copy" else E.CL_MEM_USE_HOST_PTR
        host = self.host(data)
        self.bufkeep.append(host)
        h = self.new("clCreateBuffer", self.ctx, E.CL_MEM_READ_WRITE | flag, size, host)
        b = Buf(h, size)
        b.shadow[:] = data
        self.bufs.append(b)

    def op_sub(self):
        roots = [b for b in self.bufs if b.root is b and b.size >= 2 * self.align]
        if not roots:
            return
        r = self.rng.choice(roots)
        origin = self.align * self.rng.randrange(r.size // self.align)
        size = 4 * self.rng.randrange(1, (r.size - origin) // 4 + 1)
        info = (ctypes.c_size_t * 2)(origin, size)
        h = self.new("clCreateSubBuffer", r.h, E.CL_MEM_READ_WRITE, E.CL_BUFFER_CREATE_TYPE_REGION, info)
        self.bufs.append(Buf(h, size, r, origin))

    def _range(self, b, unit=4):
        n = b.size // unit
        start = self.rng.randrange(n)
        return unit * start, unit * self.rng.randrange(1, n - start + 1)

    def op_write(self):
        b = self.rng.choice(self.bufs)
        off, size = self._range(b, 1)
        data = np.frombuffer(self.rng.randbytes(size), np.uint8)
        ev = self.enqueue("clEnqueueWriteBuffer", self.rng.choice(self.queues), [b.h, 0, off, size, self.host(data)],
                          writes=[b])
        if not ev.failed:
            b.view()[off:off + size] = data

    def op_read(self):
        b = self.rng.choice(self.bufs)
        off, size = self._range(b, 1)
        out = self.host(np.full(size, 0xA5, np.uint8))
        ev = self.enqueue("clEnqueueReadBuffer", self.rng.choice(self.queues), [b.h, 0, off, size, out], reads=[b])
        expected = np.full(size, 0xA5, np.uint8) if ev.failed else b.view()[off:off + size].copy()
        self.reads.append((out, expected, ev, f"read {size} at {off}"))

    def op_copy(self):
        src, dst = self.rng.choice(self.bufs), self.rng.choice(self.bufs)
        if src.root is dst.root:
            return
        so, size = self._range(src, 1)
        if size > dst.size:
            size = dst.size
        do = self.rng.randrange(dst.size - size + 1)
        ev = self.enqueue("clEnqueueCopyBuffer", self.rng.choice(self.queues), [src.h, dst.h, so, do, size],
                          reads=[src], writes=[dst])
        if not ev.failed:
            dst.view()[do:do + size] = src.view()[so:so + size]

    def op_fill(self):
        b = self.rng.choice(self.bufs)
        psize = self.rng.choice((1, 2, 4, 8, 16))
        if b.size % psize:
            return
        off, size = self._range(b, psize)
        pat = np.frombuffer(self.rng.randbytes(psize), np.uint8)
        ev = self.enqueue("clEnqueueFillBuffer", self.rng.choice(self.queues),
                          [b.h, self.host(pat), psize, off, size], writes=[b])
        if not ev.failed:
            b.view()[off:off + size] = np.tile(pat, size // psize)

    def op_kernel(self):
        b = self.rng.choice(self.bufs)
        name = self.rng.choice(("add_const", "axpy", "mul_idx"))
        k = self.kernels[name]
        n = b.size // 4
        first = self.rng.randrange(n)
        count = self.rng.randrange(1, n - first + 1)
        self.call("clSetKernelArg", k, 0, 8, ctypes.byref(C(b.h)))
        reads, writes = [b], [b]
        c = self.rng.randrange(1 << 32)
        if name == "axpy":
            xs = [x for x in self.bufs if x.root is not b.root and x.size >= b.size]
            if not xs:
                return
            x = self.rng.choice(xs)
            self.call("clSetKernelArg", k, 1, 8, ctypes.byref(C(x.h)))
            self.call("clSetKernelArg", k, 2, 4, ctypes.byref(ctypes.c_uint32(c)))
            reads = [b, x]
        elif name == "add_const":
            self.call("clSetKernelArg", k, 1, 4, ctypes.byref(ctypes.c_uint32(c)))
        gof, gsz = (ctypes.c_size_t * 1)(first), (ctypes.c_size_t * 1)(count)
        self.keep += [gof, gsz]
        ev = self.enqueue("clEnqueueNDRangeKernel", self.rng.choice(self.queues), [k, 1, gof, gsz, None],
                          reads=reads, writes=writes)
        self.st.launches += 1
        if ev.failed:
            return
        a = b.view()[:n * 4].view(np.uint32)
        idx = np.arange(first, first + count, dtype=np.uint64)
        with np.errstate(over="ignore"):
            if name == "add_const":
                a[first:first + count] += np.uint32(c)
            elif name == "mul_idx":
                a[first:first + count] = a[first:first + count] * np.uint32(3) + idx.astype(np.uint32)
            else:
                xv = x.view()[:n * 4].view(np.uint32)
                a[first:first + count] = np.uint32(c) * xv[first:first + count] + a[first:first + count]

    def op_map(self):
        """Blocking map, check, change, unmap: only where nothing unresolved could block it."""
        b = self.rng.choice(self.bufs)
        qs = [q for q in self.queues if not any(e.unresolved() for e in q.events)]
        if not qs:
            return
        q = self.rng.choice(qs)
        waits = self._waits(q, [b], [b])
        if any(e.unresolved() for e in waits) or any(e.failed for e in waits):
            return
        n, lst = self._wait_args(waits)
        off, size = self._range(b, 1)
        self.st.calls += 1
        self.trace.append(("clEnqueueMapBuffer", (q.h, b.h, off, size, n)))
        h = C()
        ptr = self.p.clEnqueueMapBuffer(q.h, b.h, 1, E.CL_MAP_READ | E.CL_MAP_WRITE, off, size, n, lst,
                                        ctypes.byref(h), ctypes.byref(self.err))
        if self.err.value != 0 or not ptr:
            self.problem("wrong_codes", f"clEnqueueMapBuffer gave {self.err.value}")
            return
        ev = self._done(q, h, waits, [b], [b])
        got = np.ctypeslib.as_array((ctypes.c_uint8 * size).from_address(ptr))
        if not np.array_equal(got, b.view()[off:off + size]):
            self.problem("wrong_results", f"mapped {size} bytes at {off} differ from the model")
        data = np.frombuffer(self.rng.randbytes(size), np.uint8)
        got[:] = data
        b.view()[off:off + size] = data
        h2 = C()
        self.call("clEnqueueUnmapMemObject", q.h, b.h, ctypes.c_void_p(ptr), 1, (C * 1)(ev.h), ctypes.byref(h2))
        self._done(q, h2, [ev], [b], [b])

    def op_rect(self):
        """A 2-D write or copy of a rectangle (rows of a pitch) into a buffer."""
        dst = self.rng.choice(self.bufs)
        pitch = self.rng.choice((8, 16, 32))
        rows_total = dst.size // pitch
        if rows_total < 2:
            return
        w, rows = self.rng.randrange(1, pitch + 1), self.rng.randrange(1, rows_total + 1)
        x, y = self.rng.randrange(pitch - w + 1), self.rng.randrange(rows_total - rows + 1)
        region = (ctypes.c_size_t * 3)(w, rows, 1)
        dorg = (ctypes.c_size_t * 3)(x, y, 0)
        self.keep += [region, dorg]
        q = self.rng.choice(self.queues)
        srcs = [b for b in self.bufs if b.root is not dst.root and b.size >= pitch * rows]
        if srcs and self.rng.random() < 0.5:
            src = self.rng.choice(srcs)
            sorg = (ctypes.c_size_t * 3)(0, 0, 0)
            self.keep.append(sorg)
            ev = self.enqueue("clEnqueueCopyBufferRect", q, [src.h, dst.h, sorg, dorg, region, pitch, 0, pitch, 0],
                              reads=[src], writes=[dst])
            block = src.view()[:pitch * rows].reshape(rows, pitch)[:, :w]
        else:
            block = np.frombuffer(self.rng.randbytes(w * rows), np.uint8).reshape(rows, w)
            horg = (ctypes.c_size_t * 3)(0, 0, 0)
            self.keep.append(horg)
            ev = self.enqueue("clEnqueueWriteBufferRect", q, [dst.h, 0, dorg, horg, region, pitch, 0, w, 0,
                                                             self.host(block)], writes=[dst])
        if not ev.failed:
            dst.view()[:pitch * rows_total].reshape(rows_total, pitch)[y:y + rows, x:x + w] = block

    def op_requeue(self):
        """Release a queue, maybe with commands pending behind unset user events (they must still
        run: the release flushes), and go on with a new one of the same kind."""
        i = self.rng.randrange(len(self.queues))
        old = self.queues[i]
        self.call("clReleaseCommandQueue", old.h)
        props = 0 if old.in_order else E.CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE
        self.queues[i] = Queue(self.new("clCreateCommandQueue", self.ctx, self.dev, props), old.in_order)

    def op_release(self):
        """Release a buffer, maybe with commands still pending on it: they must still run."""
        if len(self.bufs) < 3:
            return
        b = self.bufs.pop(self.rng.randrange(len(self.bufs)))
        self.call("clReleaseMemObject", b.h)

    def op_wait(self):
        """clWaitForEvents on events nothing unresolved is upstream of."""
        evs = [e for e in self.rng.sample(self.events, min(3, len(self.events))) if not e.unresolved()]
        if evs:
            arr = (C * len(evs))(*[e.h for e in evs])
            self.call("clWaitForEvents", len(evs), arr, expect=FAILED if any(e.failed for e in evs) else 0)

    def op_callback(self):
        """A completion callback: called once, with the event's final status."""
        if not self.events:
            return
        e = self.rng.choice(self.events)
        calls = []
        cb = EVENT_CALLBACK(lambda h, status, data: calls.append(status))
        self.callbacks.append((e, cb, calls))
        self.call("clSetEventCallback", e.h, E.CL_COMPLETE, cb, None)

    def op_user(self):
        fate = self.rng.choice((E.CL_COMPLETE, E.CL_COMPLETE, -1, -7 - self.rng.randrange(50)))
        h = self.new("clCreateUserEvent", self.ctx)
        self.users.append(Ev(h, fate < 0, [], user=True, fate=fate))

    def op_set_user(self):
        pending = [u for u in self.users if not u.set]
        if pending:
            self.set_user(self.rng.choice(pending))

    def set_user(self, u):
        self.call("clSetUserEventStatus", u.h, u.fate)
        u.set = True

    def op_marker(self):
        q = self.rng.choice(self.queues)
        name = self.rng.choice(("clEnqueueMarkerWithWaitList", "clEnqueueBarrierWithWaitList"))
        waits = self._waits(q, [], []) if self.rng.random() < 0.7 else []
        n, lst = self._wait_args(waits)
        h = C()
        self.call(name, q.h, n, lst, ctypes.byref(h))
        # complete before other threads can see it in the pool
        ev = self._done(q, h, waits, [], [], after_all=not waits or "Barrier" in name)
        # later commands may wait for a marker without wait list too (PyPlat makes it a barrier:
        # the spec lets an out-of-order queue order more than the wait lists ask)
        if "Barrier" in name or not waits:
            q.barrier = ev

    def op_finish(self):
        q = self.rng.choice(self.queues)
        if not any(e.unresolved() for e in q.events):
            self.call("clFinish", q.h)

    def checkpoint(self):
        self.verify()
        self.release()

    def verify(self):
        for u in self.users:
            if not u.set:
                self.set_user(u)
        for q in self.queues:
            self.call("clFinish", q.h)
        if self.events:                     # those of released queues too
            arr = (C * len(self.events))(*[e.h for e in self.events])
            self.call("clWaitForEvents", len(self.events), arr,
                      expect=FAILED if any(e.failed for e in self.events) else 0)
        for e in self.events + self.users:
            st = ctypes.c_int32()
            self.call("clGetEventInfo", e.h, E.CL_EVENT_COMMAND_EXECUTION_STATUS, 4, ctypes.byref(st), None)
            want = e.fate if e.user else (FAILED if e.failed else E.CL_COMPLETE)
            if st.value != want and not (e.failed and not e.user and st.value < 0 and self.loose):
                self.problem("wrong_status", f"event status {st.value}, expected {want}")
        for e, cb, calls in self.callbacks:
            want = e.fate if e.user else (FAILED if e.failed else E.CL_COMPLETE)
            for _ in range(200):            # callbacks may come from the completing thread a little later
                if calls:
                    break
                import time
                time.sleep(0.001)
            if len(calls) != 1 or (calls[0] != want and not (self.loose and calls[0] < 0 and want < 0)):
                self.problem("wrong_status", f"event callback calls {calls}, expected [{want}]")
        for out, expected, ev, what in self.reads:
            if not np.array_equal(np.frombuffer(out, np.uint8), expected):
                self.problem("wrong_results", f"{what}: host memory differs from the model")
        for b in self.bufs:
            b.root.writer, b.root.readers = None, []     # a released root's too: its sub-buffers live on
        for b in self.bufs:
            if b.root is b:
                out = self.host(np.zeros(b.size, np.uint8))
                self.call("clEnqueueReadBuffer", self.queues[0].h, b.h, 1, 0, b.size, out, 0, None, None)
                if not np.array_equal(np.frombuffer(out, np.uint8), b.shadow):
                    self.problem("wrong_results", f"buffer of {b.size} bytes differs from the model (stale or wrong)")
                b.writer, b.readers = None, []

    def release(self):
        for e in self.events + self.users:
            self.call("clReleaseEvent", e.h)
        if self.pool is not None:
            with self.pool[0]:
                gone = {id(e) for e in self.events}
                self.pool[1][:] = [e for e in self.pool[1] if id(e) not in gone]
        for q in self.queues:
            q.events, q.barrier = [], None
        self.events, self.reads, self.users, self.keep, self.callbacks = [], [], [], [], []

    loose = False
    OPS = (("op_create", 3), ("op_sub", 1), ("op_write", 4), ("op_read", 4), ("op_copy", 3), ("op_fill", 3),
           ("op_kernel", 5), ("op_map", 1), ("op_user", 2), ("op_set_user", 2), ("op_marker", 2), ("op_finish", 1),
           ("op_rect", 2), ("op_release", 1), ("op_requeue", 1), ("op_wait", 1), ("op_callback", 1))

    def run(self, steps, checkpoint_every=40, last=True):
        names = [n for n, _ in self.OPS]
        weights = [w for _, w in self.OPS]
        self.op_create()
        self.op_create()
        for i in range(steps):
            getattr(self, self.rng.choices(names, weights)[0])()
            if (i + 1) % checkpoint_every == 0:
                self.checkpoint()
        if last:
            self.checkpoint()

    def close(self):
        for b in reversed(self.bufs):
            self.call("clReleaseMemObject", b.h)
        for k in self.kernels.values():
            self.call("clReleaseKernel", k)
        for q in self.queues:
            self.call("clReleaseCommandQueue", q.h)


class Session:
    """A platform, a context and the kernels' program, for many sequences."""

    def __init__(self, platform="PyPlat"):
        self.p = p = Platform(platform)
        devs = (C * 1)()
        p.clGetDeviceIDs(p.id, E.CL_DEVICE_TYPE_ALL, 1, devs, None)
        self.dev = devs[0]
        err = ctypes.c_int32()
        self.ctx = p.clCreateContext(None, 1, devs, None, None, ctypes.byref(err))
        src = ctypes.c_char_p(KERNELS)
        self.prog = p.clCreateProgramWithSource(self.ctx, 1, ctypes.byref(src), None, ctypes.byref(err))
        assert p.clBuildProgram(self.prog, 0, None, None, None, None) == 0
        bits = ctypes.c_uint32()
        p.clGetDeviceInfo(self.dev, E.CL_DEVICE_MEM_BASE_ADDR_ALIGN, 4, ctypes.byref(bits), None)
        self.align = max(bits.value // 8, 4)
        self.loose = "pyplat" not in platform.lower()

    def sequence(self, seed, steps, stats, trace=None):
        m = Model(self.p, self.ctx, self.dev, self.prog, random.Random(seed), stats, trace=trace, align=self.align)
        m.loose, m.seed = self.loose, seed
        m.run(steps)
        m.close()

    def threaded(self, seed, steps, stats, threads=8):
        """`threads` host threads, each a sequence on its own queues, with each other's events in
        their wait lists."""
        pool = (threading.Lock(), [])
        per = [Stats() for _ in range(threads)]
        errors = []

        def body(i):
            try:
                m = Model(self.p, self.ctx, self.dev, self.prog, random.Random(seed * 1000 + i), per[i], pool=pool,
                          align=self.align)
                m.loose, m.seed = self.loose, f"{seed} thread {i}"
                m.run(steps, checkpoint_every=10 ** 9, last=False)
                m.verify()
            except Exception as exc:            # reported as a wrong result, with the thread
                errors.append(f"thread {i}: {exc!r}")
            barrier.wait()                      # no thread releases events the others may still list
            try:
                m.release()
                m.close()
            except Exception as exc:            # reported as a wrong result, with the thread
                errors.append(f"thread {i}: {exc!r}")
        barrier = threading.Barrier(threads)
        ts = [threading.Thread(target=body, args=(i,)) for i in range(threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        for s in per:
            stats.add(s)
        for e in errors:
            stats.wrong_results += 1
            stats.problems.append(e)


def format_trace(trace):
    """The call sequence of a sequence, one call a line, handles as hex."""
    def arg(a):
        if isinstance(a, int):
            return hex(a) if a > 4096 else str(a)
        if a is None:
            return "NULL"
        return type(a).__name__
    return "\n".join(f"{i:5d} {n}({', '.join(arg(a) for a in args)})" for i, (n, args) in enumerate(trace, 1))


# ---- children: many sequences each, one line per sequence ----------------------------------------

def child(platform, first, count, steps, threads_every):
    import sys
    s = Session(platform)
    out = sys.stdout
    for seed in range(first, first + count):
        st = Stats()
        out.write(f"S {seed}\n")
        out.flush()
        if threads_every and seed % threads_every == 0:
            s.threaded(seed, steps // 2, st, threads=8)
        else:
            s.sequence(seed, steps, st)
        for p in st.problems[:5]:
            out.write("P " + p.replace("\n", " ") + "\n")
        out.write(f"R {seed} {st.calls} {st.launches} {st.wrong_codes} {st.wrong_results} {st.wrong_status}\n")
        out.flush()


def run(platform="PyPlat", first=0, count=10, steps=200, threads_every=0, timeout=60.0, env=None):
    """Sequences first .. first+count-1 in child processes (`env`: more environment variables,
    e.g. PYPLAT_INORDER_PARALLEL=0): totals, and the seeds that crashed or hung (a new child goes
    on after them)."""
    import os
    import subprocess
    import sys
    import tempfile
    tot = {"sequences": 0, "calls": 0, "launches": 0, "wrong_codes": 0, "wrong_results": 0, "wrong_status": 0,
           "crashes": [], "hangs": [], "problems": []}
    here = os.path.dirname(os.path.abspath(__file__))
    tests = os.path.dirname(here)                     # the folder of the support package
    seed, end = first, first + count
    while seed < end:
        errf = tempfile.TemporaryFile(mode="w+")      # a file: a chatty child never blocks on it
        proc = subprocess.Popen([sys.executable, "-c", f"import sys; sys.path.insert(0, {tests!r}); from support import fuzz_model;"
                                 f"fuzz_model.child({platform!r}, {seed}, {end - seed}, {steps}, {threads_every})"],
                                stdout=subprocess.PIPE, stderr=errf, bufsize=0, cwd=here,
                                env=dict(os.environ, **(env or {})))
        current, hung = None, False
        for line in child_lines(proc, timeout):
            if line is None:
                hung = True
                break
            tag, rest = line[0], line[2:].strip()
            if tag == "S":
                current = int(rest)
            elif tag == "P":
                tot["problems"].append(rest)
            elif tag == "R":
                f = rest.split()
                tot["sequences"] += 1
                for k, v in zip(("calls", "launches", "wrong_codes", "wrong_results", "wrong_status"), f[1:]):
                    tot[k] += int(v)
                seed, current = int(f[0]) + 1, None
        rc = proc.wait()
        errf.seek(0)
        err = errf.read()[-2000:]
        errf.close()
        if current is None:
            if seed < end:                      # died before its first sequence: the set-up failed
                tot["crashes"].append((seed, f"set-up, exit {rc}: {err}"))
                break
            continue
        tot["hangs" if hung else "crashes"].append((current, f"exit {rc}"))
        seed = current + 1
    return tot
