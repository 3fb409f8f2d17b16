"""Kernels: argument values as set by clSetKernelArg, and their snapshot for a launch."""
import ctypes
import struct

from pyplat.core import checks, migration
from pyplat.core.object import RefCounted, arm_plan, disarm_plan
from pyplat.core.queue import STDOUT, Retained, merged_accesses
from pyplat.devices.spaces import HOST as HOST_SPACE
from pyplat.runtime.graph import KernelSizes, LaunchPlan


_pack_address = struct.Struct("<Q").pack_into

# The API layer's native fast path keeps a slot per kernel: its current launch plan, which the
# native clSetKernelArg may replace by a derived one (pyplat/api/_native.pyx, KernelSlot).
# new_slot() makes one; installed by the API layer at start-up (api/bridge.direct_entries). None:
# no fast path, kernels have no slot.
new_slot = None


def _same_arg(a, b):
    return a is not None and a[0] == b[0] and (a[1] is b[1] if a[0] == "mem" else a[1] == b[1])


class LaunchShape:
    """What every object of one kernel (one program build, one kernel name) shares for launches,
    since it depends on the kernel's signature and attributes, not on argument values: the
    argument block's layout (see Kernel.snapshot), which arguments the kernel writes through, and
    the latest launch sizes validated (api/enqueue.py), which a new object's first plan is told
    (Kernel.prepare_plan) and the native side shares (sizes: KernelSizes)."""
    __slots__ = ("cells", "block_size", "argv", "written", "value_sizes", "kinds", "last_launch",
                 "sizes", "fast", "n_args")

    def __init__(self, info, program):
        context = program.context
        # a checked kernel (PYPLAT_CHECK) has hidden arguments after its own: its check record's
        # address (and, for races, a launch-state cell: core/checks.py, hidden_arguments)
        kinds = [arg.kind if arg.kind in ("global", "constant", "local") else max(arg.size, 1)
                 for arg in info.args] + checks.hidden_arguments(info)
        n = self.n_args = len(kinds)
        cells, offset = [], 8 * max(n, 1)
        for kind in kinds:
            size = 8 if kind in ("global", "constant", "local") else kind
            align = min(128, 1 << max(0, (size - 1).bit_length()))
            offset += -offset % align
            cells.append(offset)
            offset += size
        self.cells = tuple(cells)
        self.block_size = offset
        self.argv = struct.pack(f"<{n}Q", *cells)
        self.written = tuple(arg.written for arg in info.args)
        self.value_sizes = tuple(0 if arg.kind in ("global", "constant", "local") else arg.size
                                 for arg in info.args) + (0,) * (n - len(info.args))
        # per argument the application sets, for clSetKernelArg's rules and the native entry: 0 by
        # value, 1 buffer, 2 __local, 3 sampler (api/native_kernel_arg_rules.pxi)
        self.kinds = bytes({"global": 1, "constant": 1, "local": 2, "sampler": 3}.get(arg.kind, 0)
                           for arg in info.args)
        self.last_launch = None
        self.sizes = KernelSizes()    # the same, natively: what a plan without them takes on a launch
        # The fast path launches with host addresses and moves no memory: not in such contexts;
        # nor checked kernels (PYPLAT_CHECK), whose launches get a check record.
        self.fast = not migration.context_moves_memory(context) and not checks.is_checked(info)
        if self.fast:                 # sizes never validated are checked natively for these
            self.sizes.launchable_on([(d, d.max_work_group_size, d.max_work_item_sizes, d.local_mem_size)
                                      for d in context.devices if program.built_for(d)],
                                     info.reqd_work_group_size)

    def remember_launch(self, device, work_dim, global_request, local_request, result):
        """A launch geometry the API layer validated on `device` (the request's size_t arrays as
        bytes; result: (global size, local size, offset, empty)), for plans made before their
        first launch."""
        global_copy = ctypes.create_string_buffer(global_request, len(global_request))
        local_copy = ctypes.create_string_buffer(local_request, len(local_request)) if local_request else None
        self.last_launch = (device, work_dim, global_copy, local_copy, result)
        global_size, local, _, empty = result
        self.sizes.remember(device, device.local_mem_size, work_dim, ctypes.addressof(global_copy),
                            ctypes.addressof(local_copy) if local_copy is not None else 0, global_size, local, empty)


class Kernel(RefCounted):
    def __init__(self, program, info, slot=None):
        super().__init__()
        self.program = program.retain()
        program.kernel_count += 1
        self.info = info
        self.name = info.name
        # Per argument: ("mem", Buffer or None) | ("local", size) | ("value", bytes)
        self.args = [None] * len(info.args)
        self.shape = program.launch_shapes.get(info.name)
        if self.shape is None or len(self.shape.cells) != len(info.args) + len(checks.hidden_arguments(info)):
            self.shape = program.launch_shapes[info.name] = LaunchShape(info, program)
        self._plan = None             # launch plan for the current argument values (see plan())
        self._space_plans = {}        # the same for devices with memory of their own, per space
        self._fast = self.shape.fast
        self.check_records = {}       # launch plan -> its check record (PYPLAT_CHECK builds)
        # the plan and the arguments as the fast path sees them (`slot`: one made natively already)
        n_set = len(info.args)
        # (a sampler_t argument can never be set, no cl_sampler existing: both entries refuse it,
        # api/native_kernel_arg_rules.pxi)
        native = new_slot is not None
        self.slot = slot if slot is not None else (new_slot(self.shape.kinds, self.shape.value_sizes[:n_set], self.shape.written[:n_set],
                              id(STDOUT) if getattr(info, "prints", True) else 0)
                     if native else None)
        self._prepared = False        # prepare_plan has run once (see there)

    def set_arg(self, index, value):
        """value: ("mem", Buffer or None) | ("local", size) | ("value", bytes). The same value
        again (the same memory object, equal bytes) keeps the plan: pyopencl sets every argument
        before each launch."""
        self._sync()
        old, self.args[index] = self.args[index], value
        if (self._plan is not None or self._space_plans) and not _same_arg(old, value):
            self.drop_plan()
        elif not self._prepared:
            self.prepare_plan()

    def prepare_plan(self):
        """The first time every argument is set (or on a clone): build the plan now, told the geometry of the latest launch validated for this
        kernel (LaunchShape.last_launch), so that the first clEnqueueNDRangeKernel finds what the
        native fast path needs and does not cross into Python to build it. Only once per kernel
        object: after that a changed memory argument drops the plan and the next launch builds
        one, so programs that set several buffers before each launch build one plan, not one
        per argument. Nothing is built at creation, which stays cheap: a kernel without
        arguments gets its plan at its first launch. Returns whether it ran now (it also runs
        for a kernel made natively and adopted with its arguments set there: prime_ndrange)."""
        if self._prepared or not self.all_args_set:
            return False
        self._prepared = True
        if self.slot is not None:
            self.slot.note_prepared()     # (the native clSetKernelArg may set the last one now)
        if not self._fast or self.slot is None or self.released_arg() is not None:
            return True               # (a released buffer: the launch reports it)
        plan = self.plan()
        arm_plan(plan)
        last = self.shape.last_launch
        if last is not None and plan.scratch_size <= last[0].local_mem_size:
            device, work_dim, global_request, local_request, (global_size, local, _, empty) = last
            plan.remember_geometry(device, work_dim, ctypes.addressof(global_request),
                                   ctypes.addressof(local_request) if local_request is not None else 0,
                                   global_size, local, empty)
        return True

    def _sync(self):
        """Take over what the native clSetKernelArg set (api/native_kernel_args.pxi): by-value
        arguments changed since the plan was made (it gave the kernel's slot a plan derived from
        this one), with that plan; then the arguments it kept for this side (set without a plan,
        a buffer that dropped it, or one it swapped in that plan), as set_arg would. Before any
        use of self.args' values or of the plan."""
        slot = self.slot
        if slot is None:
            return
        if self._plan is not None:
            derived = slot.derived(self._plan)
            if derived is not None:
                self._plan, values = derived
                self._space_plans = {}
                for index, value in values.items():
                    self.args[index] = ("value", value)
        taken = slot.take_args()
        if taken:
            for index, value, in_plan in taken:
                old, self.args[index] = self.args[index], value
                if not in_plan and (self._plan is not None or self._space_plans) and not _same_arg(old, value):
                    self._disarm()
                    self._plan = None
                    self._space_plans = {}
                    slot.set_plan(None)

    def current_plan(self):
        """The plan of the current arguments if there is one (None after a change)."""
        self._sync()
        return self._plan

    @property
    def all_args_set(self):
        self._sync()
        return all(a is not None for a in self.args)

    def released_arg(self):
        """Index of a memory argument the program has released since it was set (the spec leaves
        launching it undefined: it must not reach the kernel), or None."""
        self._sync()
        for i, (kind, value) in enumerate(self.args):
            if kind == "mem" and value is not None and value.reference_count <= 0:
                return i
        return None

    def drop_plan(self):
        self._sync()
        self._disarm()
        self._plan = None
        self._space_plans = {}
        self.check_records = {}          # (launches still pending hold theirs: core/checks.py)
        if self.slot is not None:
            self.slot.set_plan(None)

    def clone(self):
        self._sync()
        other = Kernel(self.program, self.info)
        other.args = list(self.args)
        if other.slot is not None:
            for index, arg in enumerate(other.args):
                if arg is not None:
                    other.slot.note_set(index)
        other.prepare_plan()
        return other

    def memory_args(self, written=False):
        """The buffers set as arguments (those the kernel may write, if `written`)."""
        return [value for (kind, value), w in zip(self.args, self.shape.written)
                if kind == "mem" and value is not None and (w or not written)]

    def accesses(self):
        """(buffer, written) of every buffer argument, and printf's output if it prints: what
        the in-order queue orders a launch by."""
        found = tuple((v, written) for (kind, v), written in zip(self.args, self.shape.written)
                      if kind == "mem" and v is not None)
        if getattr(self.info, "prints", True):     # printf output keeps the queue's order
            found += ((STDOUT, True),)
        return found

    def bring_arguments(self, queue):
        """Before a launch on `queue` in a context whose memory moves (core/migration.py): the
        runtime commands it must wait for (transfers of its buffer arguments to the device's
        space, pending ones its writes would race with), and a function that records, with
        the launch's command, that its written arguments are now current only there."""
        space = queue.device.memory_space
        written = self.memory_args(written=True)
        after = migration.bring(queue, self.memory_args(), space) + migration.settle(written, space)
        return after, lambda command: migration.wrote(written, space, command)

    def plan(self, space=HOST_SPACE):
        """The runtime's LaunchPlan for the current argument values, built once per change of the
        arguments (clSetKernelArg): the argument block and its local-pointer cells, the code,
        the merged memory accesses for the in-order queue's ordering, and what stays alive while
        launches are pending (the buffers and the program). The runtime copies the block into
        each command, so one snapshot serves every launch; its native fast path of
        clEnqueueNDRangeKernel reads this plan too (through self.slot). For a device with memory
        of its own (`space`), a plan of its own: the block holds the buffers' addresses there."""
        self._sync()
        plan = self._plan if space.shares_host else self._space_plans.get(space)
        if plan is None:
            local_size = self.local_args_size()
            static_local = self.info.local_mem_size
            base = (static_local + 127) & ~127
            block, local_cells, buffers = self.snapshot(base, space)
            record = None
            if checks.is_checked(self.info):
                record = checks.new_record(self.info, self.args)
                block = bytearray(block)
                _pack_address(block, self.shape.cells[len(self.args)], ctypes.addressof(record))
                block = bytes(block)
            scratch_size = (base if local_size else static_local) + local_size
            if record is not None:        # PYPLAT_CHECK=uninit, races: room for the shadows
                scratch_size = checks.launch_local_size(self.info, record, scratch_size)
            plan = LaunchPlan(self.info.address, block, self.shape.n_args, local_cells,
                              scratch_size, Retained([self.program] + buffers),
                              self.program.result, merged_accesses(self.accesses()),
                              self.program.context, self.shape.value_sizes, self.name,
                              self.shape.sizes if space.shares_host else None)
            if record is not None:
                self.check_records[plan] = record
            if not space.shares_host:
                self._space_plans[space] = plan
                return plan
            self._plan = plan
            if self.slot is not None and self._fast:
                self.slot.set_plan(plan)
        return plan

    def device_launch(self, queue, work_dim, global_size, local_size, offset, empty, wait_events):
        """A launch on a device that runs code of its own (its class's `launch_command`, with this
        kernel's code for its target): a command of `queue` whose buffers are brought to the
        device first. Returns the Event."""
        from pyplat import cl
        self._sync()
        device, space = queue.device, queue.device.memory_space
        if empty:
            command = queue.new_command(self.name)
        else:
            # (the device class takes the addresses when it needs them: device memory is
            # allocated then)
            args = [("mem", (lambda b=value: migration.address_in(b, space)) if value is not None else None)
                    if kind == "mem" else (kind, value) for kind, value in self.args]
            result = self.program.device_result(device)
            if result is None:
                raise LookupError(f"no code of {self.program} for {device.name}")
            command = device.device_class.launch_command(device.class_index, result, result.kernels[self.name],
                                                         args, work_dim, global_size, local_size, offset)
        after, record = self.bring_arguments(queue)
        event = queue.enqueue(cl.CL_COMMAND_NDRANGE_KERNEL, command, wait_events,
                              retain=[self.program] + self.memory_args(), accesses=self.accesses(),
                              after=after)
        record(event.command)
        return event

    def snapshot(self, local_scratch_base, space=HOST_SPACE):
        """Arguments as the work-group function reads them: (block, local cells, buffers).

        The block starts with argv, one 64-bit entry per argument: the offset of its value in
        the block (the runtime turns offsets into addresses in each command's copy). Each value
        is aligned to its size (up to 128 bytes) so vector arguments can be loaded with aligned
        instructions. A local argument's value is the offset of its piece of the work-group's
        scratch area (128-byte aligned pieces after the kernel's own __local variables, from
        `local_scratch_base`); its cell is listed in the local cells. The layout is the kernel's
        LaunchShape; a NULL buffer argument stays 0.
        """
        shape = self.shape
        block = bytearray(shape.block_size)
        block[:len(shape.argv)] = shape.argv
        buffers, local_cells = [], []
        local_offset = local_scratch_base
        for cell, (kind, value) in zip(shape.cells, self.args):
            if kind == "mem":
                if value is not None:
                    _pack_address(block, cell, migration.address_in(value, space))
                    buffers.append(value)
            elif kind == "local":
                _pack_address(block, cell, local_offset)
                local_cells.append(cell)
                local_offset += (value + 127) & ~127
            elif value:
                block[cell:cell + len(value)] = value
        return bytes(block), local_cells, buffers

    def local_args_size(self):
        """Bytes of __local arguments set so far (unset arguments count nothing)."""
        self._sync()
        return sum((a[1] + 127) & ~127 for a in self.args if a is not None and a[0] == "local")

    def _disarm(self):
        plan = self._plan
        if plan is not None:
            root = plan if plan.root is None else plan.root
            if root.armed:
                disarm_plan(root)

    def destroy(self):
        self._disarm()
        self.program.kernel_count -= 1
        self.program.release()
