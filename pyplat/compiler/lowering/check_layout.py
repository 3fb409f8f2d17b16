"""The layout of PYPLAT_CHECK's check record and check frame (lowering/checks.py, check_shadow.py;
the core reads the record: pyplat/core/checks.py)."""

# The check record (uint64 words; one per launch plan, pyplat/core/checks.py reads it): the
# finding (flag, site, ids, offset, size, kind, the other work-item of a race), and what the core
# tells the kernel: the group's local memory size (shadow memory follows it: check_shadow.py)
REC_FOUND, REC_SITE, REC_GLOBAL_ID, REC_LOCAL_ID, REC_OFFSET, REC_SIZE = 0, 1, 2, 5, 8, 9
REC_KIND, REC_OTHER, REC_LOCAL_TOTAL = 10, 11, 12
REC_HEADER = 16                    # then, per kernel argument, the size of its object (0: none)
KIND_BOUNDS, KIND_UNINIT, KIND_WRITE_WRITE, KIND_WRITE_AFTER_READ, KIND_READ_AFTER_WRITE = range(5)
KIND_DIVZERO = 5                   # an integer division or remainder by zero
KIND_UNDEFINED_USE = 6             # uninit: a use of a value read from unwritten __local bytes

# The work-group's check frame (i64 words): the record, the number of objects, whether this
# group had a finding, the local memory's address, the shadows' addresses (0: none; races:
# the writers' tags, then the readers'), the barrier epoch, the local memory's size, uninit's
# smallest key of a use of an undefined value (check_defined.py); then (base, size, space code)
# per object.
FR_RECORD, FR_COUNT, FR_FOUND, FR_LOCAL, FR_SHADOW_UNINIT, FR_SHADOW_RACES, FR_EPOCH, FR_LOCAL_TOTAL = range(8)
FR_UNDEFINED = 8
FR_OBJECTS = 9
WI_FRAME = 2                       # the frame pointer's field in the work-item state
