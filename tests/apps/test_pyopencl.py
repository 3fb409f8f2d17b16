"""pyopencl programs on PyPlat, through pyopencl's own ICD loader: results match numpy."""
import numpy as np
import pytest

import pyplat

pyplat.enable()     # before pyopencl initialises its loader

cl = pytest.importorskip("pyopencl")


def test_platform_and_device_info(ctx):
    dev = ctx.devices[0]
    assert dev.type == cl.device_type.CPU
    assert dev.max_compute_units >= 1
    assert dev.global_mem_size > 0
    assert dev.platform.name == "PyPlat"
    assert "cl_khr_icd" in dev.platform.extensions


def test_vecadd_matches_numpy(ctx, queue):
    src = """__kernel void add(__global const float *a, __global const float *b, __global float *c) {
        int i = get_global_id(0); c[i] = a[i] + b[i]; }"""
    prg = cl.Program(ctx, src).build()
    a = np.random.default_rng(0).random(10000, dtype=np.float32)
    b = np.random.default_rng(1).random(10000, dtype=np.float32)
    mf = cl.mem_flags
    a_g = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
    b_g = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b)
    c_g = cl.Buffer(ctx, mf.WRITE_ONLY, a.nbytes)
    prg.add(queue, a.shape, None, a_g, b_g, c_g)
    c = np.empty_like(a)
    cl.enqueue_copy(queue, c, c_g)
    np.testing.assert_array_equal(c, a + b)


def test_2d_kernel_with_offset_and_scalar_args(ctx, queue):
    src = """__kernel void fill2d(__global int *out, int width, int bias) {
        int x = get_global_id(0), y = get_global_id(1);
        out[y * width + x] = x * 1000 + y + bias + (int)get_global_offset(0); }"""
    prg = cl.Program(ctx, src).build()
    w, h = 16, 8
    out = np.zeros((h + 2, w + 4), dtype=np.int32)
    out_g = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=out)
    prg.fill2d(queue, (w, h), (4, 2), out_g, np.int32(w + 4), np.int32(7), global_offset=(4, 2))
    cl.enqueue_copy(queue, out, out_g)
    ys, xs = np.mgrid[2:h + 2, 4:w + 4]
    np.testing.assert_array_equal(out[2:, 4:], xs * 1000 + ys + 7 + 4)
    assert (out[:2] == 0).all() and (out[:, :4] == 0).all()


def test_build_error_has_log(ctx):
    prg = cl.Program(ctx, "__kernel void broken(__global int *a) { a[0] = ; }")
    with pytest.raises(cl.RuntimeError) as info:
        prg.build()
    message = str(info.value)          # pyopencl puts the build log into the exception
    assert "BUILD_PROGRAM_FAILURE" in message
    assert ":1:" in message and "error:" in message and "Traceback" not in message


def test_buffer_copy_fill_and_map(ctx, queue):
    data = np.arange(256, dtype=np.uint32)
    src = cl.Buffer(ctx, cl.mem_flags.COPY_HOST_PTR, hostbuf=data)
    dst = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, data.nbytes)
    cl.enqueue_fill_buffer(queue, dst, np.uint32(9), 0, data.nbytes)
    cl.enqueue_copy(queue, dst, src, byte_count=64, src_offset=0, dst_offset=128)
    mapped, _ = cl.enqueue_map_buffer(queue, dst, cl.map_flags.READ, 0, data.shape, data.dtype)
    expected = np.full(256, 9, dtype=np.uint32)
    expected[32:48] = data[:16]
    np.testing.assert_array_equal(mapped, expected)
    mapped.base.release(queue)
    queue.finish()


def test_events_and_profiling(ctx):
    q = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 1 << 16)
    ev = cl.enqueue_fill_buffer(q, buf, np.uint8(1), 0, 1 << 16)
    ev.wait()
    assert ev.command_execution_status == cl.command_execution_status.COMPLETE
    assert ev.profile.queued <= ev.profile.submit <= ev.profile.start <= ev.profile.end


def test_user_event_gates_kernel(ctx, queue):
    prg = cl.Program(ctx, "__kernel void one(__global int *a) { a[get_global_id(0)] = 1; }").build()
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=np.zeros(4, np.int32))
    gate = cl.UserEvent(ctx)
    q = cl.CommandQueue(ctx)
    ev = prg.one(q, (4,), None, buf, wait_for=[gate])
    assert ev.command_execution_status != cl.command_execution_status.COMPLETE
    gate.set_status(cl.command_execution_status.COMPLETE)
    ev.wait()
    out = np.empty(4, np.int32)
    cl.enqueue_copy(q, out, buf)
    assert out.tolist() == [1, 1, 1, 1]


def test_python_exception_survives_opencl_calls_during_unwinding(queue):
    """pyopencl releases temporaries while a TypeError propagates; the shim must keep the
    pending exception aside while our Python code runs (else: SystemError)."""
    import pyopencl.array as cla

    class Container:
        def __init__(self, data):
            self.data = data

        def __eq__(self, other):          # makes numpy-style dispatch fall through to TypeError
            return Container(self.data == other)

    with pytest.raises(TypeError):
        Container(np.ones(100)) + cla.zeros(queue, (10,), dtype=np.float64)


def test_queues_of_every_kind(ctx):
    """Queues are made natively (pyplat/api/native_queues.pxi) and adopted when pyopencl asks
    about them: each kind runs its commands."""
    data = np.arange(256, dtype=np.int32)
    for properties in (0, cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE,
                       cl.command_queue_properties.PROFILING_ENABLE):
        queue = cl.CommandQueue(ctx, properties=properties)
        buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=data)
        out = np.empty_like(data)
        cl.enqueue_copy(queue, out, buf).wait()
        queue.finish()
        assert out.tolist() == data.tolist() and queue.properties == properties
