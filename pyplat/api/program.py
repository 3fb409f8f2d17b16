"""Programs: creation from source or binary, building, info and build info."""
import ctypes

from pyplat import cl
from pyplat.api import _native, handles, info
from pyplat.api.entry import entry
from pyplat.api.errors import CLError, check
from pyplat.core.context import Context
from pyplat.core.device import Device
from pyplat.core.program import Program

BUILD_NOTIFY = ctypes.CFUNCTYPE(None, ctypes.c_size_t, ctypes.c_void_p)


def lookup_program(address):
    return handles.lookup(address, Program, cl.CL_INVALID_PROGRAM)


@entry
def clCreateProgramWithSource(context, count, strings, lengths, errcode_ret):
    ctx = handles.lookup(context, Context, cl.CL_INVALID_CONTEXT)
    check(count and strings, cl.CL_INVALID_VALUE, "count is 0 or strings is NULL")
    pointers = (ctypes.c_size_t * count).from_address(strings)
    sizes = (ctypes.c_size_t * count).from_address(lengths) if lengths else [0] * count
    parts = []
    for ptr, size in zip(pointers, sizes):
        check(ptr, cl.CL_INVALID_VALUE, "an entry of strings is NULL")
        parts.append(ctypes.string_at(ptr, size) if size else ctypes.string_at(ptr))
    source = b"".join(parts).decode("utf-8", errors="replace")
    return handles.created(Program(ctx, source), handles.PROGRAM)


@entry
def clCreateProgramWithBinary(context, num_devices, device_list, lengths, binaries, binary_status, errcode_ret):
    ctx = handles.lookup(context, Context, cl.CL_INVALID_CONTEXT)
    check(num_devices and device_list, cl.CL_INVALID_VALUE, "no devices given")
    devices = handles.lookup_array(num_devices, device_list, Device, cl.CL_INVALID_DEVICE)
    check(all(d in ctx.devices for d in devices), cl.CL_INVALID_DEVICE, "device not in the context")
    check(lengths and binaries, cl.CL_INVALID_VALUE, "lengths or binaries is NULL")
    sizes = (ctypes.c_size_t * num_devices).from_address(lengths)
    pointers = (ctypes.c_size_t * num_devices).from_address(binaries)
    statuses = (ctypes.c_int32 * num_devices).from_address(binary_status) if binary_status else None
    # binary_status[i]: "CL_INVALID_VALUE if lengths[i] is zero or if binaries[i] is a NULL value
    # or CL_INVALID_BINARY in binary_status[i] if program binary is not a valid binary for the
    # specified device" (OpenCL 3.0); parse_binary verifies every byte (checksum) before use.
    parsed, codes = [], []
    for ptr, size in zip(pointers, sizes):
        p = Program.parse_binary(ctypes.string_at(ptr, size)) if ptr and size else None
        parsed.append(p)
        codes.append(cl.CL_SUCCESS if p else cl.CL_INVALID_BINARY if ptr and size else cl.CL_INVALID_VALUE)
    if statuses is not None:
        for i, c in enumerate(codes):
            statuses[i] = c
    check(cl.CL_INVALID_VALUE not in codes, cl.CL_INVALID_VALUE, "a binary is NULL or empty")
    check(all(parsed), cl.CL_INVALID_BINARY, "not an intact PyPlat program binary (damaged, or not "
                                             "made by PyPlat, or an object of another machine)")
    b = parsed[0]
    device_objects = {}
    if b["ir_object"] is not None:
        b, device_objects = _objects_per_target(devices, parsed, statuses)
    else:
        check(all(p == b for p in parsed), cl.CL_INVALID_BINARY, "binaries of different programs")
    prog = Program(ctx, b["source"], binary_options=b["options"], devices=devices, package=b["package"],
                   ir_object=b["ir_object"], binary_type=b["binary_type"], device_objects=device_objects)
    prog.no_source = b["linked"]
    return handles.created(prog, handles.PROGRAM)


def _objects_per_target(devices, parsed, statuses):
    """Compiled objects or libraries, one binary per device: a host device's is the host's
    object, a GPU's carries the host's and its target's (Program.binary). All must be of one
    program. Returns (the parsed binary giving the host's object, {target: object})."""
    kinds = {p["binary_type"] for p in parsed}
    check(len(kinds) == 1 and None not in [p["ir_object"] for p in parsed], cl.CL_INVALID_BINARY,
          "binaries of different kinds (compiled objects, libraries, executables) for one program")
    objects = {}
    for i, (d, p) in enumerate(zip(devices, parsed)):
        target = d.compiler_target
        if p.get("object_target") != target.recorded_name:
            if statuses is not None:
                statuses[i] = cl.CL_INVALID_BINARY
            check(False, cl.CL_INVALID_BINARY, f"binary {i} is an object for "
                  f"{p.get('object_target') or 'the host'}, not for {d.name}")
        if target.runs_own_code:
            check(objects.get(target, p["device_object"]) == p["device_object"], cl.CL_INVALID_BINARY,
                  "binaries of different programs")
            objects[target] = p["device_object"]
    check(all(p["ir_object"] == parsed[0]["ir_object"] for p in parsed), cl.CL_INVALID_BINARY,
          "binaries of different programs")
    return parsed[0], objects


@entry
def clRetainProgram(program):
    handles.retain(lookup_program(program))


@entry
def clReleaseProgram(program):
    prog = lookup_program(program)
    _native.settle_native_plans(program)     # (released kernels' native plans: api/native_plans.pxi)
    handles.release(prog)


def device_subset(prog, num_devices, device_list):
    check(bool(num_devices) == bool(device_list), cl.CL_INVALID_VALUE,
          "num_devices and device_list disagree")
    if not device_list:
        return list(prog.devices)
    devices = handles.lookup_array(num_devices, device_list, Device, cl.CL_INVALID_DEVICE)
    check(all(d in prog.devices for d in devices), cl.CL_INVALID_DEVICE, "device not associated with the program")
    return devices


@entry
def clBuildProgram(program, num_devices, device_list, options, pfn_notify, user_data):
    prog = lookup_program(program)
    devices = device_subset(prog, num_devices, device_list)
    check(pfn_notify or not user_data, cl.CL_INVALID_VALUE, "user_data without pfn_notify")
    check(prog.kernel_count == 0 and _native.forget_kernel_layouts(program), cl.CL_INVALID_OPERATION,
          "kernels are attached to the program")
    text = ctypes.string_at(options).decode("utf-8", errors="replace") if options else ""
    if prog.from_binary and not text:
        text = prog.options
    check(not prog.linked, cl.CL_INVALID_OPERATION,
          "the program was made by clLinkProgram, not from source or a binary")
    result = prog.build(devices, text)
    if pfn_notify:
        BUILD_NOTIFY(pfn_notify)(program, user_data)
    if result.invalid_options:
        return cl.CL_INVALID_BUILD_OPTIONS
    if not result.ok:
        return cl.CL_BUILD_PROGRAM_FAILURE


def _strings(count, address, what):
    pointers = (ctypes.c_size_t * count).from_address(address)
    out = []
    for i, ptr in enumerate(pointers):
        check(ptr, cl.CL_INVALID_VALUE, f"{what}[{i}] is NULL")
        out.append(ctypes.string_at(ptr).decode("utf-8", errors="replace"))
    return out


@entry
def clCompileProgram(program, num_devices, device_list, options, num_input_headers, input_headers,
                     header_include_names, pfn_notify, user_data):
    prog = lookup_program(program)
    devices = device_subset(prog, num_devices, device_list)
    check(pfn_notify or not user_data, cl.CL_INVALID_VALUE, "user_data without pfn_notify")
    if num_input_headers:
        check(input_headers and header_include_names, cl.CL_INVALID_VALUE,
              "num_input_headers > 0 but input_headers or header_include_names is NULL")
        progs = [lookup_program(h) for h in (ctypes.c_size_t * num_input_headers).from_address(input_headers)]
        names = _strings(num_input_headers, header_include_names, "header_include_names")
        headers = [(n, p.source) for n, p in zip(names, progs)]
    else:
        check(not input_headers and not header_include_names, cl.CL_INVALID_VALUE,
              "num_input_headers is 0 but input_headers or header_include_names is not NULL")
        headers = []
    check(prog.kernel_count == 0 and _native.forget_kernel_layouts(program), cl.CL_INVALID_OPERATION,
          "kernels are attached to the program")
    check(not prog.from_binary and not prog.linked, cl.CL_INVALID_OPERATION,
          "the program was not created from source")
    text = ctypes.string_at(options).decode("utf-8", errors="replace") if options else ""
    result = prog.compile(devices, text, headers)
    if pfn_notify:
        BUILD_NOTIFY(pfn_notify)(program, user_data)
    if result.invalid_options:
        return cl.CL_INVALID_COMPILER_OPTIONS
    if not result.ok:
        return cl.CL_COMPILE_PROGRAM_FAILURE


@entry
def clLinkProgram(context, num_devices, device_list, options, num_input_programs, input_programs,
                  pfn_notify, user_data, errcode_ret):
    from pyplat import compiler
    ctx = handles.lookup(context, Context, cl.CL_INVALID_CONTEXT)
    check(bool(num_devices) == bool(device_list), cl.CL_INVALID_VALUE, "num_devices and device_list disagree")
    check(num_input_programs and input_programs, cl.CL_INVALID_VALUE,
          "num_input_programs is 0 or input_programs is NULL")
    check(pfn_notify or not user_data, cl.CL_INVALID_VALUE, "user_data without pfn_notify")
    if device_list:
        devices = handles.lookup_array(num_devices, device_list, Device, cl.CL_INVALID_DEVICE)
        check(all(d in ctx.devices for d in devices), cl.CL_INVALID_DEVICE, "device not in the context")
    else:
        devices = list(ctx.devices)
    inputs = [lookup_program(h) for h in (ctypes.c_size_t * num_input_programs).from_address(input_programs)]
    text = ctypes.string_at(options).decode("utf-8", errors="replace") if options else ""
    try:
        compiler.parse_link_options(text)
    except Exception as e:
        raise CLError(cl.CL_INVALID_LINKER_OPTIONS, str(e))
    for p in inputs:
        check(p.context is ctx, cl.CL_INVALID_OPERATION, "an input program belongs to another context")
        check(p.binary_type in (cl.CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT, cl.CL_PROGRAM_BINARY_TYPE_LIBRARY)
              and p.ir_object is not None, cl.CL_INVALID_OPERATION,
              "an input program is not a compiled object or library")
        check(all(d in p.devices for d in devices), cl.CL_INVALID_OPERATION,
              "an input program has no compiled object or library for a device of device_list")
    prog = Program(ctx, "", devices=devices)
    handle = handles.created(prog, handles.PROGRAM)
    result = prog.link(devices, text, inputs)
    if pfn_notify:
        BUILD_NOTIFY(pfn_notify)(handle, user_data)
    if not result.ok:
        # the program object stays valid (its build log says why); errcode_ret reports the failure
        e = CLError(cl.CL_LINK_PROGRAM_FAILURE, "link failed")
        e.result = handle
        raise e
    return handle


def _require_built(prog):
    check(prog.built, cl.CL_INVALID_PROGRAM_EXECUTABLE, "the program has not been built")
    return prog




INFO = {
    cl.CL_PROGRAM_REFERENCE_COUNT: (info.uint, handles.reference_count),
    cl.CL_PROGRAM_CONTEXT: (info.pointer, lambda p: handles.handle_of(p.context, handles.CONTEXT)),
    cl.CL_PROGRAM_NUM_DEVICES: (info.uint, lambda p: len(p.devices)),
    cl.CL_PROGRAM_DEVICES: (info.size_t_array, lambda p: [handles.handle_of(d, handles.DEVICE) for d in p.devices]),
    cl.CL_PROGRAM_SOURCE: (info.string, lambda p: p.source),
    cl.CL_PROGRAM_IL: (info.raw, lambda p: b""),
    cl.CL_PROGRAM_BINARY_SIZES: (info.size_t_array, lambda p: [len(p.binary(d)) for d in p.devices]),
    cl.CL_PROGRAM_NUM_KERNELS: (info.size_t, lambda p: len(_require_built(p).kernel_names)),
    cl.CL_PROGRAM_KERNEL_NAMES: (info.string, lambda p: ";".join(_require_built(p).kernel_names)),
    cl.CL_PROGRAM_SCOPE_GLOBAL_CTORS_PRESENT: (info.boolean, lambda p: False),
    cl.CL_PROGRAM_SCOPE_GLOBAL_DTORS_PRESENT: (info.boolean, lambda p: False),
}


@entry
def clGetProgramInfo(program, param_name, param_value_size, param_value, param_value_size_ret):
    prog = lookup_program(program)
    if param_name == cl.CL_PROGRAM_BINARIES:
        # An array of pointers, one per device, each to a buffer of CL_PROGRAM_BINARY_SIZES bytes.
        n = len(prog.devices)
        info.return_value(b"\0" * 8 * n, param_value_size, 0, param_value_size_ret)
        if param_value:
            check(param_value_size >= 8 * n, cl.CL_INVALID_VALUE, "param_value_size too small")
            for d, ptr in zip(prog.devices, (ctypes.c_size_t * n).from_address(param_value)):
                data = prog.binary(d)
                if ptr and data:
                    ctypes.memmove(ptr, data, len(data))
        return
    info.query(INFO, prog, param_name, param_value_size, param_value, param_value_size_ret)


BUILD_INFO = {
    cl.CL_PROGRAM_BUILD_STATUS: (info.int32, lambda pd: pd[0].status[pd[1]]),
    cl.CL_PROGRAM_BUILD_OPTIONS: (info.string, lambda pd: pd[0].options),
    cl.CL_PROGRAM_BUILD_LOG: (info.string, lambda pd: pd[0].log[pd[1]]),
    cl.CL_PROGRAM_BINARY_TYPE: (info.uint, lambda pd: pd[0].binary_type),
    cl.CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE: (info.size_t, lambda pd: 0),
}


@entry
def clGetProgramBuildInfo(program, device, param_name, param_value_size, param_value, param_value_size_ret):
    prog = lookup_program(program)
    dev = handles.lookup(device, Device, cl.CL_INVALID_DEVICE)
    check(dev in prog.devices, cl.CL_INVALID_DEVICE, "device not associated with the program")
    info.query(BUILD_INFO, (prog, dev), param_name, param_value_size, param_value, param_value_size_ret)
