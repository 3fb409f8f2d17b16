"""PYPLAT_CHECK=races on `__global` memory, the core's side: a shadow per buffer, and the check
record's table of them (the kernel's side: compiler/checker/global_races.py).

A shadow is anonymous memory mapped without a reservation (pages no tag was written to cost
nothing; a read of them maps the zero page): a header page, then two uint32 tags per byte of
the buffer, the last writer's and the last reader's, then two per 4-byte word for accesses of
whole aligned words (the checker's layout.py: SH_*). One per buffer (a
sub-buffer uses its parent's, from its origin), made at the first checked launch plan that
needs it, so launches clear nothing: a tag of another launch has another serial. When its
buffer is destroyed, a shadow waits for the next buffer of the same size (`_spare`), serials
and pages as they are: pyopencl's reductions and scans make their temporaries anew at every
call, and a fresh shadow for each cost a page fault per 4 KiB of tags the call touched (the
scan of 2^24 ints: 43,000 faults, 4.5 times the unchecked call's time). Only arguments some argument of the launch writes to are checked
(reads of a buffer nobody writes cannot race), which keeps read-only inputs free of tag
traffic; they get word tags all the same, mapped and never used (fill_record says why).
"""
import ctypes
import mmap
import threading

from pyplat.compiler.checker.layout import (GS_HEADER, GS_OWNER, GS_READERS, GS_WORD_READERS, GS_WORD_WRITERS,
                                            GS_WRITERS, SH_MADVISE, SH_PAGE, SH_TAG_BYTES, rec_global_shadow)

_MAP_NORESERVE = getattr(mmap, "MAP_NORESERVE", 0x4000)
_shadows = {}                                 # id(root buffer) -> its GlobalShadow, while it lives
_madvise = None
# Shadows map 10 bytes per byte of their buffers, of which accesses of whole aligned words touch
# 2 (the word tags) and others 8 (the byte tags): past this many bytes of word tags (all
# buffers), the tags a launch wrote are dropped when it ends (madvise; the next launch has
# another serial, so nothing is lost). Programs that keep many buffers (pyopencl's tests) stay
# within memory; a few large ones keep their pages from launch to launch (page faults cost as
# much as a kernel).
KEEP_BYTES = 2 << 30
# Buffers larger than this are not race-checked (their shadow alone would be 10 times as large).
LARGEST_CHECKED = 256 << 20
_mapped = 0
_lock = threading.Lock()              # (a shadow made twice: a record would hold a dead one)
# Shadows of destroyed buffers kept for reuse: size -> [GlobalShadow], at most SPARES in all,
# and none while the shadows' word tags pass KEEP_BYTES.
_spare = {}
SPARES = 8


def _madvise_address():
    global _madvise
    if _madvise is None:
        _madvise = ctypes.cast(ctypes.CDLL(None).madvise, ctypes.c_void_p).value
    return _madvise


class GlobalShadow:
    """The tags of one buffer's bytes (`address`: the header's)."""
    __slots__ = ("map", "address", "size", "words", "present")

    def __init__(self, size):
        self.size = size
        self.words = (size + 3) & ~3                  # (bytes of each word-tag array)
        self.present = False                          # (the word tags' pages: untracked_words)
        self.map = mmap.mmap(-1, SH_PAGE + 8 * max(size, 1) + 2 * self.words,
                             flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _MAP_NORESERVE)
        view = ctypes.c_char.from_buffer(self.map)
        self.address = ctypes.addressof(view)
        del view                               # (no export left: the map closes with the object)
        header = (ctypes.c_uint64 * 3).from_address(self.address)
        header[SH_TAG_BYTES] = len(self.map) - SH_PAGE
        header[SH_MADVISE] = _madvise_address()

    def writers(self, origin):
        return self.address + SH_PAGE + 4 * origin

    def readers(self, origin):
        return self.address + SH_PAGE + 4 * (self.size + origin)

    def word_writers(self, origin):
        return self.address + SH_PAGE + 8 * max(self.size, 1) + origin

    def word_readers(self, origin):
        return self.word_writers(origin) + self.words

    def untracked_words(self):
        """The word tags made present (written once), for a launch that does not check this
        buffer: the kernel's tag accesses are then masked off, and a masked access of a page
        that is not mapped costs a microcode assist on x86 (some 100 cycles) even where no
        lane is on."""
        if not self.present:
            ctypes.memset(self.word_writers(0), 0, 2 * self.words)
            self.present = True


def shadow_of(root):
    """The buffer's shadow, made on first use (or a spare of a destroyed buffer of its size)
    and given up when the buffer is destroyed (its last launch has ended then: launches retain
    their buffers)."""
    with _lock:
        shadow = _shadows.get(id(root))
        if shadow is None:
            spares = _spare.get(root.size)
            if spares:
                # (its tags are of earlier serials of its header, which goes on counting: none
                # can conflict with the new buffer's launches)
                shadow = spares.pop()
            else:
                global _mapped
                shadow = GlobalShadow(root.size)
                _mapped += 2 * shadow.words
            _shadows[id(root)] = shadow
            root.add_destructor(lambda key=id(root): _drop(key))
        return shadow


def _drop(key):
    global _mapped
    with _lock:
        shadow = _shadows.pop(key, None)
        if shadow is None:
            return
        if _mapped <= KEEP_BYTES and sum(map(len, _spare.values())) < SPARES:
            _spare.setdefault(shadow.size, []).append(shadow)
            return
        _mapped -= 2 * shadow.words
    shadow.map.close()


def launch_ended(record):
    """A launch with this record ended: past KEEP_BYTES, its shadows' tags dropped (a launch
    still running on one of them only loses tags: races missed, none invented)."""
    shadows = getattr(record, "shadows", ())
    if _mapped <= KEEP_BYTES:
        return
    for shadow in shadows:
        with _lock:
            if not shadow.map.closed:          # (not unmapped meanwhile)
                shadow.map.madvise(mmap.MADV_DONTNEED, SH_PAGE, len(shadow.map) - SH_PAGE)
                shadow.present = False


def record_words(n_args):
    """Words of a check record for n_args arguments (the shadows' table included)."""
    return rec_global_shadow(n_args, n_args)


# An argument without a shadow (no buffer, or one too large) gets word-tag addresses of its
# own all the same, never used (the kernel skips its tag accesses) but apart from every other
# argument's: a vectorised loop over work-items compares the address ranges of all its tag
# accesses before it runs, and runs its scalar copy where two overlap (as they would at 0).
# Above user space, 2^41 bytes apart.
_APART_BASE, _APART_STRIDE = 1 << 62, 1 << 41


def _apart(record, at, index):
    record[at + GS_WORD_WRITERS] = _APART_BASE + _APART_STRIDE * (2 * index)
    record[at + GS_WORD_READERS] = _APART_BASE + _APART_STRIDE * (2 * index + 1)


def fill_record(info, args, record):
    """Per __global buffer argument of the launch plan (args: core/kernel.py's values) that some
    argument writes to: its shadow's addresses, in the record's table."""
    n = len(args)
    roots = []
    for arg, (kind, value) in zip(info.args, args):
        buffer = value if kind == "mem" and arg.kind == "global" else None
        root = None if buffer is None else (buffer.parent or buffer)
        roots.append((root, 0 if buffer is None or buffer.parent is None else buffer.origin))
    # (the arguments with a race-checked write: compiler/checker/versions.py)
    race_written = info.check.get("race_written")
    written = {id(root) for i, ((root, _), arg) in enumerate(zip(roots, info.args)) if root is not None
               and (arg.written if race_written is None else i in race_written)}
    owners, shadows = {}, []
    for i, (root, origin) in enumerate(roots):
        at = rec_global_shadow(n, i)
        if root is None or root.size > LARGEST_CHECKED:
            _apart(record, at, i)
            continue
        shadow = shadow_of(root)
        if id(root) not in written:         # not checked: the word tags only, never used
            shadow.untracked_words()
            record[at + GS_WORD_WRITERS] = shadow.word_writers(origin)
            record[at + GS_WORD_READERS] = shadow.word_readers(origin)
            continue
        record[at + GS_WRITERS] = shadow.writers(origin)
        record[at + GS_READERS] = shadow.readers(origin)
        record[at + GS_WORD_WRITERS] = shadow.word_writers(origin)
        record[at + GS_WORD_READERS] = shadow.word_readers(origin)
        record[at + GS_HEADER] = shadow.address
        record[at + GS_OWNER] = owners.setdefault(id(root), i)
        shadows.append(shadow)
    record.shadows = shadows              # (for launch_ended)
    return record

