"""The layout of PYPLAT_CHECK's check record, check frame and shadows: what the compiled checks
(table.py, local_shadow.py, global_races.py) and the core's run-time half (pyplat/core/checks.py,
check_shadows.py) share. It imports nothing, so that the core reads it without the checker."""

# The check record (uint64 words; one per launch plan, pyplat/core/checks.py reads it): the
# finding (flag, site, ids, offset, size, kind, the other work-item of a race), and what the core
# tells the kernel: the group's local memory size (shadow memory follows it: local_shadow.py)
REC_FOUND, REC_SITE, REC_GLOBAL_ID, REC_LOCAL_ID, REC_OFFSET, REC_SIZE = 0, 1, 2, 5, 8, 9
REC_KIND, REC_OTHER, REC_LOCAL_TOTAL = 10, 11, 12
REC_HEADER = 16                    # then, per kernel argument, the size of its object (0: none)
KIND_BOUNDS, KIND_UNINIT, KIND_WRITE_WRITE, KIND_WRITE_AFTER_READ, KIND_READ_AFTER_WRITE = range(5)
KIND_DIVZERO = 5                   # an integer division or remainder by zero
KIND_UNDEFINED_USE = 6             # uninit: a use of a value read from unwritten __local bytes

# The work-group's check frame (i64 words): the record, the number of objects, whether this
# group had a finding, the local memory's address, the shadows' addresses (0: none; races:
# the writers' tags, then the readers'), the barrier epoch, the local memory's size, uninit's
# smallest key of a use of an undefined value (definedness.py); then (base, size, space code)
# per object. Its address is in the work-item state (lowering's irbuild.WI_FRAME field).
FR_RECORD, FR_COUNT, FR_FOUND, FR_LOCAL, FR_SHADOW_UNINIT, FR_SHADOW_RACES, FR_EPOCH, FR_LOCAL_TOTAL = range(8)
FR_UNDEFINED = 8
FR_OBJECTS = 9

# The shadows of a group's __local memory (local_shadow.py) follow its own bytes in the local
# memory the launch gets: per byte, uninit's flag byte and races' tags (8 bytes of byte tags, 2
# of word tags).
RACE_BYTES = 10


def shadow_factor(kinds):
    """Local memory a launch gets, in multiples of what the kernel uses."""
    return 1 + ("uninit" in kinds) + RACE_BYTES * ("races" in kinds)

# PYPLAT_CHECK=races on __global memory (global_races.py, core/check_shadows.py). The
# record's second table, after the per-argument sizes: per kernel argument GS_WORDS words, the
# address of the writers' tag of its byte 0, of the readers' tag, its shadow's header (0: not
# race-checked), the index of the first argument with the same shadow (one serial each), and
# the addresses of the writers' and readers' word tags of its byte 0.
GS_WRITERS, GS_READERS, GS_HEADER, GS_OWNER, GS_WORD_WRITERS, GS_WORD_READERS, GS_WORDS = range(7)


def rec_global_shadow(n_args, index):
    """The record's word where argument `index`'s GS_WORDS words start."""
    return REC_HEADER + n_args + GS_WORDS * index


# A global shadow: a header page (uses so far, the tags' length in bytes, madvise's address),
# then a uint32 writers' tag per byte of the buffer, then a readers' tag per byte (byte tags:
# accesses of other sizes or alignments), then a writers' and a readers' uint32 tag per 4-byte
# word (word tags: accesses of whole aligned words; the tag of the word at byte offset o is at
# byte offset o of its array, so that consecutive words have consecutive tags). A tag is
# serial << TAG_SERIAL_SHIFT | (barrier epoch mod 2^8) << TAG_EPOCH_SHIFT | flat work-item id
# mod 2^14 (group linear id * group volume + local linear id); 0: none.
SH_USES, SH_TAG_BYTES, SH_MADVISE = 0, 1, 2
SH_PAGE = 4096
TAG_SERIAL_SHIFT, TAG_EPOCH_SHIFT, TAG_FLAT_BITS = 22, 14, 14
SERIALS = (1 << (32 - TAG_SERIAL_SHIFT)) - 1      # serials 1 .. SERIALS; 0 would look like no tag
EPOCHS = 1 << (TAG_SERIAL_SHIFT - TAG_EPOCH_SHIFT)
# The hidden launch-state argument (a by-value cell after the record's, copied into each
# command): word 0: 0 untaken, 1 being set up, 2 ready; then per kernel argument its serial.
LAUNCH_STARTING, LAUNCH_READY = 1, 2
# A global race's `other` (the record's REC_OTHER): bit 32: the other work-item is of the same
# work-group, bits 0-13 its local linear id; else its flat id mod 2^14 there, exact where bit 33
# is set (the launch has <= 2^14 work-items); bits 14-31: the group volume.
OTHER_SAME_GROUP, OTHER_EXACT = 1 << 32, 1 << 33
