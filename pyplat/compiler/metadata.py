"""Kernel metadata: recorded from the typed tree at compile time as plain data (JSON in packages
and compiled objects), turned into KernelInfo objects when the program's code is loaded."""
from .. import cl
from . import analysis, pointer_writes
from . import types as T
from .results import ArgInfo, KernelInfo

_ADDR_Q = {"global": cl.CL_KERNEL_ARG_ADDRESS_GLOBAL, "constant": cl.CL_KERNEL_ARG_ADDRESS_CONSTANT,
           "local": cl.CL_KERNEL_ARG_ADDRESS_LOCAL, "private": cl.CL_KERNEL_ARG_ADDRESS_PRIVATE,
           "generic": cl.CL_KERNEL_ARG_ADDRESS_GLOBAL}


def kernel_meta(kernels, names, check_sites=None, arg_info=True):
    """[metadata dict] of the kernels (typed tree), names: kernel -> work-group function symbol;
    check_sites: the module's compiled checks (the instrumentation's metadata(): checker/instrument.py),
    or None; arg_info: the unit was compiled with -cl-kernel-arg-info (clGetKernelArgInfo may
    answer; it travels with each kernel, so a linked program answers per kernel as the unit that
    defined it was compiled)."""
    out = []
    for k in kernels:
        written = pointer_writes.written_params(k)
        args_info = []
        for p, pi in zip(k.params, k.param_info):
            t = p.type
            if t.is_pointer:
                kind = {"global": "global", "constant": "constant", "local": "local"}.get(pi["addrspace"], "global")
                aq = _ADDR_Q.get(pi["addrspace"], cl.CL_KERNEL_ARG_ADDRESS_GLOBAL)
                tq = 0
                if pi["const"] or kind == "constant":
                    tq |= cl.CL_KERNEL_ARG_TYPE_CONST
                if pi["restrict"]:
                    tq |= cl.CL_KERNEL_ARG_TYPE_RESTRICT
                if pi["volatile"]:
                    tq |= cl.CL_KERNEL_ARG_TYPE_VOLATILE
                size = 8
                w = (p in written) and kind != "constant"
            elif t is T.SAMPLER:
                # set with a cl_sampler (api/kernel.py); the kernel reads the 4-byte CLK_* bits
                kind, aq, tq, size, w = "sampler", cl.CL_KERNEL_ARG_ADDRESS_PRIVATE, cl.CL_KERNEL_ARG_TYPE_NONE, 4, False
            else:
                kind, aq, tq, size, w = "value", cl.CL_KERNEL_ARG_ADDRESS_PRIVATE, cl.CL_KERNEL_ARG_TYPE_NONE, t.size, False
            args_info.append(ArgInfo(name=p.name, type_name=pi["type_name"], address_qualifier=aq,
                                     access_qualifier=cl.CL_KERNEL_ARG_ACCESS_NONE, type_qualifier=tq,
                                     kind=kind, size=size, written=w))
        local_size = 0
        for v in k.local_vars:
            local_size = max(local_size, v.index + v.type.size)
        out.append({"name": k.name, "symbol": names[k.name],
                    "args": [{s: getattr(a, s) for s in ArgInfo.__slots__} for a in args_info],
                    "attributes": k.attributes, "reqd_work_group_size": list(k.reqd),
                    "local_mem_size": local_size, "private_mem_size": analysis.private_size(k),
                    "prints": analysis.prints(k), "arg_info": bool(arg_info)})
        if check_sites is not None:     # the site table, and this kernel's objects
            out[-1]["check"] = {"sites": check_sites["sites"], "objects": check_sites["objects"].get(k.name, []),
                                "kinds": check_sites["kinds"],
                                "race_written": check_sites["race_written"].get(k.name, [])}
    return out


def kernel_infos(kernels_meta, engine):
    """name -> KernelInfo of each kernel's metadata, its address taken from the loaded engine
    (engine None: code that is not loaded here, e.g. PTX; address None)."""
    infos = {}
    for kd in kernels_meta:
        infos[kd["name"]] = KernelInfo(
            name=kd["name"], symbol=kd["symbol"],
            address=engine.get_function_address(kd["symbol"]) if engine is not None else None,
            args=[ArgInfo(**a) for a in kd["args"]], attributes=kd["attributes"],
            reqd_work_group_size=tuple(kd["reqd_work_group_size"]), local_mem_size=kd["local_mem_size"],
            private_mem_size=kd["private_mem_size"], prints=kd.get("prints", True), check=kd.get("check"),
            # metadata of an older PyPlat has no such field: it answered every query then
            arg_info=kd.get("arg_info", True),
            _engine=engine)
    return infos
