"""Findings of the checks compiled into kernels (PYPLAT_CHECK; the compiled side is
the checker, pyplat/compiler/checker/; docs/tools.md "PYPLAT_CHECK"). This run-time half
reads only the checker's layout module (the record's words), never its IR code.

A checked kernel has one hidden argument after its own: the address of its check record, one
per launch plan (new_record), which holds the sizes of the objects its pointer arguments point
to and, once an access failed, the first finding. A launch whose kernel found one ends with
CL_OUT_OF_RESOURCES (the runtime sees the work-group function's result); when the command has
ended, `watch`'s hook turns the record into a Finding: one line on stderr, and `findings`.
Launches of one kernel object with the same arguments that overlap share the record: a
finding is then reported once, by the first of them to end (each one's status is its own).
"""
import atexit
import ctypes
import sys
import threading

from pyplat.compiler.checker.layout import (KIND_BOUNDS, KIND_DIVZERO, KIND_READ_AFTER_WRITE,
                                            KIND_UNDEFINED_USE, KIND_UNINIT,
                                            KIND_WRITE_AFTER_READ, KIND_WRITE_WRITE, REC_FOUND,
                                            REC_GLOBAL_ID, REC_HEADER, REC_KIND, REC_LOCAL_ID,
                                            REC_LOCAL_TOTAL, REC_OFFSET, REC_OTHER, REC_SITE, REC_SIZE)
from pyplat.compiler.checker.layout import OTHER_EXACT, OTHER_SAME_GROUP, TAG_FLAT_BITS
from pyplat.compiler.checker.layout import shadow_factor as _factor
from pyplat.core import check_shadows
from pyplat.runtime.graph import reap

findings = []                  # every Finding of this process, oldest first
_lock = threading.Lock()
_reaping_at_exit = False       # reap() registered with atexit (the first watched launch)


class Finding:
    """A bad access a compiled check found: `kind` ("out-of-bounds read" / "... write"), the
    kernel, the work-item's global and local ids, the source file, line and column, the object
    (`object`: argument or variable name, None where the pointer's origin is unknown, and its
    address `space`), the offset from the object's start (the address where unknown) and the
    access's size in bytes; `object_size` where known; for a data race, `other`: the local
    linear id of the other work-item (same barrier interval, same bytes); for one on __global
    memory, `other_group`: the other work-item's work-group linear id, "same" for this
    work-item's group, None where unknown (`other` is then None too). For a use of a value
    read from uninitialised __local memory: `use` (what the work-item did with it: "branch",
    "address", "store", "control": a store done under an `if` on it), the use's place in file/line/column (for a store, the
    __global object in object/space), and `origin`: (file, line, column, variable) of the read."""
    __slots__ = ("kind", "kernel", "global_id", "local_id", "file", "line", "column", "object",
                 "object_kind", "space", "offset", "size", "object_size", "other", "other_group", "use",
                 "origin")

    def __init__(self, **fields):
        self.use = self.origin = self.other_group = None
        for name, value in fields.items():
            setattr(self, name, value)

    def __str__(self):
        where = "global (%d, %d, %d) local (%d, %d, %d)" % (*self.global_id, *self.local_id)
        if self.origin is not None:
            file, line, column, variable = self.origin
            return "kernel '%s' work-item %s: %s (read at %s:%d:%d%s): %s, at %s:%d:%d" % (
                self.kernel, where, self.kind, file, line, column,
                "" if variable is None else " from __local %s" % variable,
                _USES.get(self.use, self.use) % self._use_words(), self.file, self.line, self.column)
        if self.space is None:               # not an access: a division by zero
            return "kernel '%s' work-item %s: %s (a %d-byte divisor), at %s:%d:%d" % (
                self.kernel, where, self.kind, self.size, self.file, self.line, self.column)
        if self.object is None:
            what = "address 0x%x through a __%s pointer to none of the kernel's objects" % (self.offset, self.space)
        else:
            size = "" if self.object_size is None else " (%d bytes)" % self.object_size
            what = "offset %d of __%s %s '%s'%s" % (self.offset, self.space, self.object_kind,
                                                  self.object, size)
        if self.space == "global" and self.kind.startswith("data race"):
            what += " (other work-item: %s)" % (
                "of another work-group" if self.other_group is None else
                "local linear id %d of the same work-group, no barrier between" % self.other
                if self.other_group == "same" else
                "work-group linear id %d, local linear id %d" % (self.other_group, self.other))
        elif self.other is not None:
            what += " (other work-item: local linear id %d, since the last barrier)" % self.other
        return "kernel '%s' work-item %s: %s of %d bytes at %s, at %s:%d:%d" % (
            self.kernel, where, self.kind, self.size, what, self.file, self.line, self.column)


    def _use_words(self):
        what = "__%s %s '%s'" % (self.space, self.object_kind, self.object) if self.object else \
            "__%s memory" % self.space
        return {"object": what}


# what a work-item did with a value read from uninitialised __local memory (Finding.use)
_USES = {"branch": "a branch on it", "address": "an address computed from it",
         "store": "a store of it to %(object)s",
         "control": "a store to %(object)s under a branch on it"}


def is_checked(info):
    return getattr(info, "check", None) is not None


def hidden_arguments(info):
    """The argument kinds (core/kernel.py, LaunchShape) a checked kernel has after its own: its
    check record's address; under races, a by-value launch state each command copies (a word,
    then one per argument: compiler/checker/global_races.py)."""
    if not is_checked(info):
        return []
    return ["global"] + ([8 * (1 + len(info.args))] if "races" in info.check.get("kinds", ()) else [])


def shadow_factor(info):
    """A checked launch's local memory, in multiples of what the kernel uses (the shadows of
    uninit and races follow it: compiler/checker/local_shadow.py)."""
    return _factor(info.check.get("kinds", ())) if is_checked(info) else 1


def launch_local_size(info, record, scratch_size):
    """The scratch size a launch plan asks for, with room for the shadows; tells the record."""
    factor = shadow_factor(info)
    if factor == 1 or not scratch_size:
        return scratch_size
    total = (scratch_size + 127) & ~127
    record[REC_LOCAL_TOTAL] = total
    return total * factor


def kernel_local_size(info, scratch_size):
    """What the kernel itself uses of a launch plan's scratch size (the device's limit applies
    to it, not to the shadows)."""
    return scratch_size // shadow_factor(info)


def new_record(info, args):
    """A check record for a launch plan of the kernel `info` with argument values `args`
    (core/kernel.py: ("mem", buffer) | ("local", size) | ("value", bytes))."""
    record = (ctypes.c_uint64 * max(check_shadows.record_words(len(args)), REC_HEADER + 1))()
    for i, arg in enumerate(args):
        kind, value = arg
        if kind == "mem" and value is not None:
            record[REC_HEADER + i] = value.size
        elif kind == "local":
            record[REC_HEADER + i] = value
    if "races" in info.check.get("kinds", ()):
        check_shadows.fill_record(info, args, record)
    return record


_KINDS = {KIND_BOUNDS: "out-of-bounds ACCESS", KIND_UNINIT: "read of uninitialised __local memory",
          KIND_WRITE_WRITE: "data race: write after another work-item's write",
          KIND_WRITE_AFTER_READ: "data race: write after another work-item's read",
          KIND_READ_AFTER_WRITE: "data race: read after another work-item's write",
          KIND_DIVZERO: "integer division by zero",
          KIND_UNDEFINED_USE: "use of a value read from uninitialised __local memory"}


def _signed(word):
    return word - (1 << 64) if word >= 1 << 63 else word


def _object_words(objects, name):
    """"variable 'x'" / "argument 'x'": a kernel object named in a finding."""
    kind = next((k for obj_name, _, k, _ in objects if obj_name == name), "object")
    return "%s '%s'" % (kind, name)


def _global_other(word):
    """(local linear id, group linear id or "same") of a __global race's other work-item from
    the record's word (compiler/checker/layout.py), (None, None) where not known."""
    low = word & ((1 << TAG_FLAT_BITS) - 1)
    volume = (word >> TAG_FLAT_BITS) & 0x3FFFF
    if word & OTHER_SAME_GROUP:
        return low, "same"
    if word & OTHER_EXACT and volume:
        return low % volume, low // volume
    return None, None


def watch(command, info, record):
    """Report the record's finding once `command` (a launch of `info` with it) has ended (its
    hook runs at the next clean-up: a wait on it, clFinish, the reaper, or at exit)."""
    global _reaping_at_exit
    if not _reaping_at_exit:           # a program that exits right after: its findings still out
        atexit.register(reap)
        _reaping_at_exit = True
    command.add_hook(lambda: (_report(info, record), check_shadows.launch_ended(record)))


def _report(info, record):
    if not record[REC_FOUND]:
        return
    with _lock:
        if not record[REC_FOUND]:
            return
        sites, objects = info.check["sites"], info.check["objects"]
        file, line, column, access, size, name, space = sites[record[REC_SITE]]
        object_kind, object_size = None, None
        for obj_name, _, kind, static_size in objects:
            if obj_name == name:
                object_kind, object_size = kind, static_size
                if kind == "argument":
                    index = [a.name for a in info.args].index(name)
                    object_size = record[REC_HEADER + index]
                break
        kind = record[REC_KIND]
        origin = None
        if kind == KIND_UNDEFINED_USE:       # REC_OTHER: the site of the read
            o_file, o_line, o_column, _, _, o_name, o_space = sites[record[REC_OTHER]]
            origin = (o_file, o_line, o_column, None if o_name is None else _object_words(objects, o_name))
        other, other_group = record[REC_OTHER], None
        if kind not in (KIND_WRITE_WRITE, KIND_WRITE_AFTER_READ, KIND_READ_AFTER_WRITE):
            other = None
        elif space == "global":
            other, other_group = _global_other(other)
        finding = Finding(kind=_KINDS[kind].replace("ACCESS", access), kernel=info.name,
                          global_id=tuple(record[REC_GLOBAL_ID:REC_GLOBAL_ID + 3]),
                          local_id=tuple(record[REC_LOCAL_ID:REC_LOCAL_ID + 3]), file=file, line=line,
                          column=column, object=name, object_kind=object_kind, space=space,
                          offset=_signed(record[REC_OFFSET]), size=record[REC_SIZE], object_size=object_size,
                          other=other, other_group=other_group,
                          use=access if origin is not None else None, origin=origin)
        record[REC_FOUND] = 0
        findings.append(finding)
    sys.stderr.write("pyplat: check: %s\n" % finding)
    sys.stderr.flush()
