"""Where a buffer's contents are, and the transfers that bring them where a command needs them
(docs/devices.md, "Memory").

Each device has a memory space (pyplat/devices/spaces.py). CPU devices share the host's, and for
a context of such devices nothing here runs. Per root buffer, byte ranges (segments) record the
spaces holding their current contents, from the host's at creation. The state is kept in
enqueue order, as PoCL keeps its last-updated device, and per range, because sub-buffers of one
buffer are written on different devices at once.

A command that needs a range in a space where it is not current gets a *transfer* first: a
command of its own, outside every queue, that waits only for the last writer of that range (and
for the transfer that brought the source copy, if still pending). Then it waits for nothing the
program did not order. The command waits for the transfer. So does any later command that uses
that copy while the transfer is pending. A command's writes make its space the only current one
for the ranges it wrote, and it becomes their last writer.

Every allocation starts zeroed. So the bytes of a buffer made without host data that no command
has written yet are current in every space: they never need a transfer.

A space can lose everything it holds (a GPU whose context a kernel fault broke, devices/spaces.py). Ranges whose
only current copy was there are then *lost*: a command that needs them waits for a transfer that
fails (its event ends with an error, and the reason is printed), until a command overwrites them.
Nothing ever reads stale or zeroed bytes in their place.
"""
import sys
import threading
import weakref

from pyplat import cl, log
from pyplat.devices.spaces import HOST

_lock = threading.Lock()           # guards the segments and allocations of every buffer
_counts = {"transfers": 0, "bytes": 0}
_holders = {}                      # space -> the root buffers with an allocation there (weak)


def stats():
    """Transfers made since the process started (or the last reset): {'transfers', 'bytes'}."""
    with _lock:
        return dict(_counts)


def reset_stats():
    with _lock:
        _counts.update(transfers=0, bytes=0)


def context_moves_memory(context):
    """Whether some device of the context has memory of its own."""
    return any(not d.memory_space.shares_host for d in context.devices)


class Everywhere(set):
    """The spaces holding bytes no command wrote yet, of a buffer made without host data: all
    of them (every allocation starts zeroed)."""

    def __contains__(self, space):
        return True


class Segment:
    """Bytes [start, end) of a root buffer: the spaces holding their current contents, the
    command that last wrote them, and the pending transfers into other spaces."""
    __slots__ = ("start", "end", "valid", "writer", "arrivals", "lost")

    def __init__(self, start, end, valid, writer=None, arrivals=None, lost=None):
        self.start, self.end, self.valid, self.writer = start, end, valid, writer
        self.arrivals = arrivals or {}
        self.lost = lost             # why no space holds these bytes any more, once that happened

    def split(self, at):
        other = Segment(at, self.end, type(self.valid)(self.valid), self.writer, dict(self.arrivals),
                        self.lost)
        self.end = at
        return other


def _root(buffer):
    return buffer.parent if buffer.parent is not None else buffer


def _range(piece):
    """A piece is a memory object, or (memory object, offset, size): its root and byte range."""
    buffer, offset, size = piece if isinstance(piece, tuple) else (piece, 0, piece.size)
    root = _root(buffer)
    start = buffer.address - root.address + offset
    return root, start, start + size


def _segments(root, start, end):
    """The root's segments covering [start, end), split at its ends (lock held)."""
    segs = root.__dict__.get("segments")
    if segs is None:
        with_data = root.flags & (cl.CL_MEM_COPY_HOST_PTR | cl.CL_MEM_USE_HOST_PTR)
        segs = root.segments = [Segment(0, root.size, {HOST} if with_data else Everywhere())]
    out, i = [], 0
    while i < len(segs):
        s = segs[i]
        if s.end <= start or s.start >= end:
            i += 1
            continue
        if s.start < start:
            segs.insert(i + 1, s.split(start))
            i += 1
            continue
        if s.end > end:
            segs.insert(i + 1, s.split(end))
        out.append(s)
        i += 1
    return out


def _pending(command):
    return command is not None and command.status > 0


def address_in(buffer, space):
    """The address of `buffer`'s bytes in `space` (made there on first use)."""
    if space.shares_host:
        return buffer.address
    root = _root(buffer)
    with _lock:
        copies = root.__dict__.setdefault("space_copies", {})
        if space not in copies:
            copies[space] = space.allocate(root.size)
            holders = _holders.get(space)
            if holders is None:
                holders = _holders[space] = weakref.WeakSet()
                space.loss_listeners.append(_forget_space)
            holders.add(root)
        return copies[space][1] + (buffer.address - root.address)


def _forget_space(space, reason):
    """`space` lost every allocation: drop them, and mark the ranges only it held as lost."""
    with _lock:
        for root in list(_holders.get(space, ())):
            root.space_copies.pop(space, None)
            for s in root.__dict__.get("segments", ()):
                s.arrivals.pop(space, None)
                if isinstance(s.valid, Everywhere):
                    continue
                s.valid.discard(space)
                if not s.valid:
                    s.lost = reason
        _holders.pop(space, None)
        space.loss_listeners.remove(_forget_space)


def readable_space(piece, preferred):
    """A space holding all of the piece's current contents: `preferred`, else the host's, else
    any; None if no one space does (then bring() gathers them)."""
    root, start, end = _range(piece)
    with _lock:
        segs = _segments(root, start, end)
        for space in (preferred, HOST):
            if all(space in s.valid for s in segs):
                return space
        common = set.intersection(*(s.valid for s in segs if not isinstance(s.valid, Everywhere)))
        return next(iter(common)) if common else None


def bring(queue, pieces, space):
    """Before a command of `queue` that uses `pieces` in `space`: transfers of the ranges whose
    contents are not current there. Returns the runtime commands the command must wait for
    (those transfers, and pending ones into `space` it would otherwise race with)."""
    waits = []
    for piece in pieces:
        root, start, end = _range(piece)
        with _lock:
            segs = _segments(root, start, end)
            for s in segs:
                arrival = s.arrivals.get(space)
                if _pending(arrival):
                    waits.append(arrival)
            runs = []                     # adjacent missing segments with one source: one transfer
            for s in segs:
                if space in s.valid:
                    continue
                if not s.valid:               # lost: nothing can bring them
                    runs.append((None, [s]))
                    continue
                source = HOST if HOST in s.valid else next(iter(s.valid))
                if runs and runs[-1][0] is source and runs[-1][1][-1].end == s.start:
                    runs[-1][1].append(s)
                else:
                    runs.append((source, [s]))
        for source, run in runs:
            waits.append(_transfer(queue, root, run, source, space) if source is not None
                         else _failed_transfer(queue, root, run))
    return waits


def _failed_transfer(queue, root, segments):
    """A transfer of lost bytes: it fails, and so does every command that waits for it."""
    command = queue.new_command("transfer")
    start, end, reason = segments[0].start, segments[-1].end, segments[0].lost

    def fail():
        sys.stderr.write(f"pyplat: bytes {start}..{end} of a buffer of {root.size} bytes were lost "
                         f"({reason}); a command that needs them fails until they are written again\n")
        return cl.CL_OUT_OF_RESOURCES
    command.set_action(fail)
    command.commit()
    return command


def _transfer(queue, root, segments, source, space):
    """A command copying adjacent segments into `space` from `source`, where they are current,
    committed outside every queue (after their last writers)."""
    with _lock:
        after = {id(c): c for s in segments for c in (s.writer, s.arrivals.get(source)) if _pending(c)}
    start, size = segments[0].start, segments[-1].end - segments[0].start
    command = queue.new_command("transfer")
    # The side the host cannot address makes the transfer (a device copy); else either. The
    # addresses are asked for when it needs them (device memory: when the transfer runs).
    maker = source if not source.host_addressable or space.shares_host else space
    maker.set_transfer(command, lambda: address_in(root, space) + start,
                       lambda: address_in(root, source) + start, size, source, space)
    for c in after.values():
        command.add_dependency(c)
    root.retain()
    command.add_hook(root.release)
    command.commit()
    with _lock:
        for s in segments:
            s.valid.add(space)
            s.arrivals[space] = command
        _counts["transfers"] += 1
        _counts["bytes"] += size
    if log.on("memory"):
        log.say("memory", f"transfer of bytes {start}..{start + size} of a {root.size}-byte buffer: "
                          f"{source.name} -> {space.name}")
    return command


def settle(pieces, space):
    """Before a command that overwrites `pieces` in `space` (no transfer needed): the pending
    transfers into `space` of those ranges, which it must not race with."""
    waits = []
    for piece in pieces:
        root, start, end = _range(piece)
        with _lock:
            waits += [s.arrivals[space] for s in _segments(root, start, end)
                      if _pending(s.arrivals.get(space))]
    return waits


def wrote(pieces, space, command):
    """`command`, enqueued in `space`, writes `pieces`: only that space's contents of their
    ranges are current, and it is their last writer."""
    for piece in pieces:
        root, start, end = _range(piece)
        with _lock:
            for s in _segments(root, start, end):
                s.valid = {space}
                s.writer = command
                s.arrivals = {}
                s.lost = None
