"""Kernels: argument values as set by clSetKernelArg, and their snapshot for a launch."""
import struct

from pyplat.core.object import RefCounted
from pyplat.core.queue import STDOUT, Retained, merged_accesses
from pyplat.runtime.graph import KernelSlot, LaunchPlan


class Kernel(RefCounted):
    def __init__(self, program, info):
        super().__init__()
        self.program = program.retain()
        program.kernel_count += 1
        self.info = info
        self.name = info.name
        # Per argument: ("mem", Buffer or None) | ("local", size) | ("value", bytes)
        self.args = [None] * len(info.args)
        self.geometry_cache = program.launch_geometries.setdefault(info.name, {})
        self._plan = None             # launch plan for the current argument values (see plan())
        self.slot = KernelSlot()      # the same plan as the runtime's native fast path sees it

    def set_arg(self, index, value):
        self.args[index] = value
        if self._plan is not None:
            self.drop_plan()

    @property
    def all_args_set(self):
        return all(a is not None for a in self.args)

    def released_arg(self):
        """Index of a memory argument the program has released since it was set (the spec leaves
        launching it undefined: it must not reach the kernel), or None."""
        for i, (kind, value) in enumerate(self.args):
            if kind == "mem" and value is not None and value.reference_count <= 0:
                return i
        return None

    def drop_plan(self):
        self._plan = None
        self.slot.set_plan(None)

    def clone(self):
        other = Kernel(self.program, self.info)
        other.args = list(self.args)
        return other

    def plan(self):
        """The runtime's LaunchPlan for the current argument values, built once per change of the
        arguments (clSetKernelArg): the argument block and its local-pointer cells, the code,
        the merged memory accesses for the in-order queue's ordering, and what stays alive while
        launches are pending (the buffers and the program). The runtime copies the block into
        each command, so one snapshot serves every launch; its native fast path of
        clEnqueueNDRangeKernel reads this plan too (through self.slot)."""
        plan = self._plan
        if plan is None:
            local_size = self.local_args_size()
            static_local = self.info.local_mem_size
            base = (static_local + 127) & ~127
            block, local_cells, buffers = self.snapshot(base)
            accesses = tuple((v, info.written) for (kind, v), info in zip(self.args, self.info.args)
                             if kind == "mem" and v is not None)
            if getattr(self.info, "prints", True):     # printf output keeps the queue's order
                accesses += ((STDOUT, True),)
            scratch_size = (base if local_size else static_local) + local_size
            plan = self._plan = LaunchPlan(self.info.address, block, len(self.args), local_cells,
                                           scratch_size, Retained([self.program] + buffers),
                                           self.program.result, merged_accesses(accesses),
                                           self.program.context)
            self.slot.set_plan(plan)
        return plan

    def snapshot(self, local_scratch_base):
        """Arguments as the work-group function reads them: (block, local cells, buffers).

        The block starts with argv, one 64-bit entry per argument: the offset of its value in
        the block (the runtime turns offsets into addresses in each command's copy). Each value
        is aligned to its size (up to 128 bytes) so vector arguments can be loaded with aligned
        instructions. A local argument's value is the offset of its piece of the work-group's
        scratch area (128-byte aligned pieces after the kernel's own __local variables, from
        `local_scratch_base`); its cell is listed in the local cells.
        """
        n = len(self.args)
        cells, offset = [], 8 * max(n, 1)
        for kind, value in self.args:
            size = len(value) if kind == "value" else 8
            align = min(128, 1 << max(0, (max(size, 1) - 1).bit_length()))
            offset += -offset % align
            cells.append(offset)
            offset += max(size, 1)
        block = bytearray(offset)
        struct.pack_into(f"<{n}Q", block, 0, *cells)
        buffers, local_cells = [], []
        local_offset = local_scratch_base
        for cell, (kind, value) in zip(cells, self.args):
            if kind == "mem":
                struct.pack_into("<Q", block, cell, value.address if value is not None else 0)
                if value is not None:
                    buffers.append(value)
            elif kind == "local":
                struct.pack_into("<Q", block, cell, local_offset)
                local_cells.append(cell)
                local_offset += (value + 127) & ~127
            elif value:
                block[cell:cell + len(value)] = value
        return bytes(block), local_cells, buffers

    def local_args_size(self):
        """Bytes of __local arguments set so far (unset arguments count nothing)."""
        return sum((a[1] + 127) & ~127 for a in self.args if a is not None and a[0] == "local")

    def destroy(self):
        self.program.kernel_count -= 1
        self.program.release()
