"""PYPLAT_CHECK=races on `__global` memory: conflicting accesses to a buffer argument by different
work-items of one launch (docs/tools.md, "PYPLAT_CHECK"; the core's side: core/check_shadows.py).

Two accesses to a byte conflict when one writes, they are by different work-items, and nothing
orders them: work-items of different groups never are within a launch, those of one group are
by a barrier between the accesses (the group's barrier epoch, local_shadow.barrier: any barrier
orders). Atomics do not race; reads alone do not; accesses through pointers of unknown origin
are not race-checked (the bounds check scans for them: no object is known here).

The core keeps a shadow per buffer (layout: SH_*), made once and kept, so nothing is
cleared per launch: each launch takes a serial per shadow when its first group starts (the
launch-state argument, a hidden by-value cell each command copies: `start`), and a tag of
another serial is another launch's. The serial wraps every SERIALS uses of a shadow; its tags
are dropped then (madvise). A tag packs the serial, the epoch mod 2^8 and the work-item's flat
id mod 2^14 (layout). Truncations only hide races: a flat id equal mod 2^14 reads as the
same work-item; the same group is tested as (flat - the group's first) mod 2^14 < volume, exact
for groups of at most 2^14 items; after 2^8 barriers a group stops comparing epochs (it then
takes its own earlier accesses as ordered).

Worker threads read and write tags with plain 32-bit loads and stores, no atomics. A lost or
stale update can only hide a race, never invent one: a finding needs a tag that another
work-item of this launch stored for this byte, so it did access it; of another group, or of
this group with the epoch still equal, which means no barrier came between (aligned 32-bit
lanes are never torn).
"""
from llvmlite import ir

from .. import abi
from . import private_proofs
from .layout import (EPOCHS, FR_EPOCH, FR_OBJECTS, GS_HEADER, GS_OWNER, GS_READERS,
                           GS_WORD_READERS, GS_WORD_WRITERS, GS_WORDS, GS_WRITERS, KIND_READ_AFTER_WRITE,
                           KIND_WRITE_AFTER_READ, KIND_WRITE_WRITE, LAUNCH_READY, LAUNCH_STARTING, OTHER_EXACT,
                           OTHER_SAME_GROUP, SERIALS, SH_MADVISE, SH_PAGE, SH_TAG_BYTES, SH_USES, TAG_EPOCH_SHIFT,
                           TAG_FLAT_BITS, TAG_SERIAL_SHIFT, rec_global_shadow)
from ..lowering.irbuild import I32, I64, PTR, VOIDT, WI_LID, WI_SLOTS_TYPE, WI_TYPE, Builder

RACES = "races"
START = "__pyplat_check_global_start"
RACE = "__pyplat_check_global_race"
# after the frame's site slots: the launch state, the group's first flat id, its volume, then
# RACE_SLOTS sites' slots: the largest key (below) of the conflicts the group's work-items found
RACE_SLOTS = 32
_STATE, _GROUP_FIRST, _VOLUME, _SLOTS = range(4)
# then, per kernel parameter, ARG_WORDS words copied from the launch state and the record once
# per group (setup): its serial (0: not race-checked), its shadow's byte and word tags' addresses
_SERIAL, _WRITERS, _READERS, _WORD_WRITERS, _WORD_READERS, ARG_WORDS = range(6)
FRAME_WORDS = _SLOTS + RACE_SLOTS


def frame_words(k):
    """The frame words kernel k's races check takes."""
    return FRAME_WORDS + ARG_WORDS * len(k.params)
# a slot's key: (local linear id + 1) << 51 | kind code << 49 (write-write, write-after-read,
# read-after-write) | the other's flat id mod 2^14 << 34 | offset mod 2^34 (a `__local` one:
# the other's local linear id there);
# 1 where no conflict (umax(old, 0) would fold into a select the vectoriser does not take)
_KEY_LID, _KEY_KIND, _KEY_OTHER, _KEY_OFFSET_BITS = 51, 49, 34, 34
FLAT_MASK = (1 << TAG_FLAT_BITS) - 1


def _scopes(table):
    """(!{the tags' scope}, !{the frame's scope}, !{both}): tag accesses are in the first, the
    frame's words in the second and in no tag's, the kernel's own accesses in neither. Without
    them LLVM takes a store of a tag or of data as a possible store to the frame and keeps the
    frame's words in memory in the loop over work-items, which then stays scalar (and takes
    `__local` data and tags, in one allocation, as possibly dependent)."""
    scopes = table.global_race_scopes
    if scopes is None:
        m = table.mg.module
        domain = m.add_metadata([ir.MetaDataString(m, "pyplat.check")])
        tags, frame = (m.add_metadata([ir.MetaDataString(m, "pyplat.check." + name), domain])
                       for name in ("tags", "frame"))
        scopes = table.global_race_scopes = (m.add_metadata([tags]), m.add_metadata([frame]),
                                             m.add_metadata([tags, frame]))
    return scopes


def tag_access(table, instr, array=None):
    """instr (a load or store of tags) marked as such (_scopes), and, where `array` names its
    tag array (a hashable key: the memory, the argument, writers' or readers'), as aliasing no
    other array's tags: a scope of its own in a second domain, whose accesses list every array
    made before as `noalias` (LLVM's scoped noalias needs one side of a pair to list the other).
    Without it LLVM compares every pair of tag arrays at run time before each vectorised loop
    over work-items (34 compares in the transpose, per row of 16 work-items). Two arguments on
    one buffer share their tags, so this is not always true; where it is not, LLVM may order
    two sites' tag accesses either way, and a tag is always one of this launch's real accesses:
    a conflict is then found from the other site, or missed, never invented."""
    tags = _scopes(table)[0]
    if array is None:
        instr.set_metadata("alias.scope", tags)
        return instr
    m = table.mg.module
    if table.tag_array_scopes is None:
        table.tag_array_scopes = ({}, m.add_metadata([ir.MetaDataString(m, "pyplat.check.arrays")]))
    arrays, domain = table.tag_array_scopes
    entry = arrays.get(array)
    if entry is None:
        earlier = [scope for scope, _, _ in arrays.values()]
        scope = m.add_metadata([ir.MetaDataString(m, "pyplat.check.array.%d" % len(earlier)), domain])
        entry = arrays[array] = (scope, m.add_metadata([tags.operands[0], scope]),
                                 m.add_metadata(earlier) if earlier else None)
    _, scopes, others = entry
    instr.set_metadata("alias.scope", scopes)
    if others is not None:
        instr.set_metadata("noalias", others)
    return instr


def frame_access(table, instr):
    """instr (a load or store of a frame word in the loop over work-items) marked as such
    (_scopes; only under races, which has stores the frame might otherwise alias)."""
    if RACES in table.kinds:
        tags, frame, _ = _scopes(table)
        instr.set_metadata("alias.scope", frame)
        instr.set_metadata("noalias", tags)
    return instr


def data_accesses(table, instructions):
    """The kernel's own loads and stores among `instructions` marked as no frame and no tag
    access."""
    if RACES in table.kinds:
        for instr in instructions:
            if isinstance(instr, (ir.LoadInstr, ir.StoreInstr)):
                instr.set_metadata("noalias", _scopes(table)[2])


def _word(b, base, index):
    return b.gep(base, [I64(index) if isinstance(index, int) else index], inbounds=True, source_etype=I64)


def global_arguments(k):
    return [i for i, (p, info) in enumerate(zip(k.params, k.param_info))
            if p.type.is_pointer and info["addrspace"] == "global"]


def wanted(table, k):
    """Whether kernel k's launches race-check __global memory (it has a __global pointer argument)."""
    return RACES in table.kinds and bool(global_arguments(k))


def setup(table, k, b, frame, record, wi, args_p, at):
    """In the work-group function's prologue (after the work-item state): the launch's serials
    taken if this is its first group (`start`), and the group's words of the frame from `at`."""
    if RACES not in table.kinds:
        return
    for j in range(RACE_SLOTS):         # (also __local race sites' slots: local_shadow.py)
        b.store(I64(0), _word(b, frame, at + _SLOTS + j))
    if not wanted(table, k):
        return
    state = b.load(b.gep(args_p, [I64(len(k.params) + 1)], inbounds=True, source_etype=PTR), typ=PTR, align=8)
    b.store(b.ptrtoint(state, I64), _word(b, frame, at + _STATE))
    ready = b.load_atomic(state, "acquire", 8, typ=I64)
    fn = b.function
    start_bb = fn.append_basic_block("check.launch.start")
    on_bb = fn.append_basic_block("check.launch")
    b.cbranch(b.icmp_unsigned("==", ready, I64(LAUNCH_READY)), on_bb, start_bb)
    b.position_at_end(start_bb)
    b.call(start_function(table), [state, record, I64(len(k.params))])
    b.branch(on_bb)
    b.position_at_end(on_bb)
    slots = b.gep(wi, [I32(0), I32(0)], inbounds=True, source_etype=WI_TYPE)

    def slot(i):
        return b.load(b.gep(slots, [I64(0), I64(i)], inbounds=True, source_etype=WI_SLOTS_TYPE), typ=I64, align=8)
    ng = [slot(abi.CTX_NUM_GROUPS + d) for d in range(2)]
    gid = [slot(abi.CTX_GROUP_ID + d) for d in range(3)]
    ls = [slot(abi.CTX_LOCAL_SIZE + d) for d in range(3)]
    volume = b.mul(b.mul(ls[0], ls[1]), ls[2])
    group = b.add(gid[0], b.mul(ng[0], b.add(gid[1], b.mul(ng[1], gid[2]))))
    b.store(b.and_(b.mul(group, volume), I64(FLAT_MASK)), _word(b, frame, at + _GROUP_FIRST))
    b.store(volume, _word(b, frame, at + _VOLUME))
    n = len(k.params)
    for i in global_arguments(k):
        words = rec_global_shadow(n, i)
        own = at + FRAME_WORDS + ARG_WORDS * i
        b.store(b.load(_word(b, state, 1 + i), typ=I64, align=8), _word(b, frame, own + _SERIAL))
        for to, word in ((_WRITERS, GS_WRITERS), (_READERS, GS_READERS), (_WORD_WRITERS, GS_WORD_WRITERS),
                         (_WORD_READERS, GS_WORD_READERS)):
            b.store(b.load(_word(b, record, words + word), typ=I64, align=8), _word(b, frame, own + to))


def skipped(table, g, index):
    """Whether the version being lowered leaves out the race checks of argument `index`
    (versions.py)."""
    skip = table.race_skip
    return skip is not None and skip[0] is g.f and index in skip[1]


def prepare(table, g, frame, at, hint, node=None, size=0, write=False):
    """Before an access's bounds check: the loads of what its race check needs, all from the
    frame (which setup filled once per group): loads LLVM may hoist out of the loop over
    work-items even from under a work-item's `if` (the frame is dereferenceable; the launch
    state and the record, which they were loaded from before, are not known to be, and a
    load of them under pyopencl's `if (i >= n) break` kept the lockstep loop scalar).
    None: the object is no argument, or this version leaves its race checks out. Each site of
    the full version is noted for private_proofs's proofs (node: the access on the typed tree,
    size: its bytes), and a write's argument in table.race_written (versions)."""
    key = table._objects_of(g.f)[hint[1]][0]
    params = list(g.f.params)
    if key not in params:
        return None
    if skipped(table, g, params.index(key)):
        return None
    if table.race_skip is None and g.f.is_kernel:     # (the full version's sites)
        private_proofs.note(table, g, params.index(key), node, size, write)
        if write:
            table.race_written.setdefault(g.f.name, set()).add(params.index(key))
    own = at + FRAME_WORDS + ARG_WORDS * params.index(key)
    b = g.b

    def word(i):
        return table._invariant(b.load(_word(b, frame, i), typ=I64, align=8))
    return (word(own + _SERIAL), word(own + _WRITERS), word(own + _READERS), word(FR_OBJECTS + 3 * hint[1]),
            word(own + _WORD_WRITERS), word(own + _WORD_READERS), params.index(key))


def access(table, g, frame, at, p, size, prepared, site, write, value=None, align=1):
    """The races check of a __global access of `size` bytes at p (an i64) inside the kernel
    argument whose shadow `prepare` loaded (its inline bounds check passed). value: what a
    store writes, where known: a write that leaves the bytes as they are conflicts with nobody
    (the outcome is the same in any order: pyopencl's scatter `b[i] = c` with repeated indices
    and equal values). align: the address's known alignment; an access of whole aligned
    4-byte words compares one tag per word (the word tags), any other one tag per byte (as do
    those that go to the cold loop: larger than 16 bytes, or past the site slots). Returns
    (the conflict's key, its slot's frame word) for the caller to `keep`, or None."""
    b = g.b
    inv = table._invariant
    serial, writers, readers, base, word_writers, word_readers, index = prepared
    slots = table.global_race_slots.setdefault(g.f.name, [])
    per_tag = 1
    if size % 4 == 0 and align >= 4 and size <= 16 and \
            (len(slots) < RACE_SLOTS or table.twin_slot(slots, site, lambda s: s[0]) is not None):
        writers, readers, per_tag = word_writers, word_readers, 4
    checked_bb = g.fn.append_basic_block("check.grace")
    done_bb = g.fn.append_basic_block("check.grace.done")
    entry_bb = b.block
    b.cbranch(b.icmp_unsigned("!=", serial, I64(0)), checked_bb, done_bb)
    b.position_at_end(checked_bb)
    rel = b.sub(p, base)
    # (word tags: the tag of the word at offset o is at byte o; byte tags: 4 bytes per byte)
    tag_t = ir.IntType(8) if per_tag == 4 else I32
    wp = b.gep(b.inttoptr(writers, PTR), [rel], source_etype=tag_t)
    rp = b.gep(b.inttoptr(readers, PTR), [rel], source_etype=tag_t)
    first = inv(b.load(_word(b, frame, at + _GROUP_FIRST), typ=I64, align=8))
    volume = inv(b.load(_word(b, frame, at + _VOLUME), typ=I64, align=8))
    ls = [g.wi_slot(abi.CTX_LOCAL_SIZE + d) for d in range(2)]
    lid = [g.wi_slot(WI_LID + d) for d in range(3)]
    flat = b.and_(b.add(first, b.add(lid[0], b.mul(ls[0], b.add(lid[1], b.mul(ls[1], lid[2]))))), I64(FLAT_MASK))
    epoch = frame_access(table, b.load(_word(b, frame, FR_EPOCH), typ=I64, align=8))
    # same-epoch compares only while the epoch fits its bits (then: same group = ordered)
    limit = b.select(b.icmp_unsigned("<", epoch, I64(EPOCHS)), I64(1 << TAG_EPOCH_SHIFT), I64(0))
    me = b.or_(b.or_(b.shl(serial, I64(TAG_SERIAL_SHIFT)), b.shl(b.and_(epoch, I64(EPOCHS - 1)),
                                                                   I64(TAG_EPOCH_SHIFT))), flat)
    args = [b.trunc(v, I32) for v in (me, first, volume, limit)]
    twin = table.twin_slot(slots, site, lambda s: s[0])
    if size <= 16 and (twin is not None or len(slots) < RACE_SLOTS):
        # no call, no branch: a call in the loop over work-items would keep `wi` in memory, a
        # branch on a conflict the loop scalar; the conflict's key goes to the caller, which
        # keeps the largest in the site's slot (`keep`), and group_end reports it
        if twin is None:
            twin = len(slots)
            slots.append((site, size, False))
        slot = at + _SLOTS + twin
        key = _slot_key(table, b, wp, rp, size // per_tag, write, args,
                        b.add(lid[0], b.mul(ls[0], b.add(lid[1], b.mul(ls[1], lid[2])))),
                        rel, _unchanged(table, b, p, size, value) if write else None, ("global", index, per_tag))
        checked_end = b.block
        b.branch(done_bb)
        b.position_at_end(done_bb)
        return joined_key(b, key, checked_end, entry_bb), slot
    if size > 16:
        b.call(race_function(table), [frame, g.wi, wp, rp, I64(size), I64(int(write)), I64(site), rel] + args)
        b.branch(done_bb)
        b.position_at_end(done_bb)
        return None
    vt = ir.VectorType(I32, size)

    def splat(v):
        return b.shuffle_vector(b.insert_element(ir.Constant(vt, ir.Undefined), v, I32(0)),
                                ir.Constant(vt, ir.Undefined), ir.Constant(vt, [0] * size))

    def const(c):
        return ir.Constant(vt, [c] * size)
    me_v, first_v, volume_v, limit_v = (splat(v) for v in args)

    def conflicts(tags):
        return _conflict(b, tags, me_v, first_v, volume_v, limit_v, const)
    hit = conflicts(b.load(wp, typ=vt, align=4))
    if write:
        hit = b.or_(hit, conflicts(b.load(rp, typ=vt, align=4)))
    any_hit = b.icmp_unsigned("!=", b.bitcast(hit, ir.IntType(size)), ir.Constant(ir.IntType(size), 0))
    slow_bb = g.fn.append_basic_block("check.grace.race")
    tag_bb = g.fn.append_basic_block("check.grace.tag")
    b.cbranch(any_hit, slow_bb, tag_bb)
    b.position_at_end(slow_bb)
    b.call(race_function(table), [frame, g.wi, wp, rp, I64(size), I64(int(write)), I64(site), rel] + args)
    b.branch(done_bb)
    b.position_at_end(tag_bb)
    b.store(me_v, wp if write else rp, align=4)
    b.branch(done_bb)
    b.position_at_end(done_bb)


def _unchanged(table, b, p, size, value):
    """i1: the memory at p already holds the bytes of `value` (None where not comparable). The
    load is a data access (data_accesses: no tag, no frame word), or LLVM checks it against
    every tag array at run time before a vectorised loop."""
    t = getattr(value, "type", None)
    scalar = t.element if isinstance(t, ir.VectorType) else t
    if not isinstance(scalar, (ir.IntType, ir.HalfType, ir.FloatType, ir.DoubleType)):
        return None
    bits = (t.count if isinstance(t, ir.VectorType) else 1) * \
        (scalar.width if isinstance(scalar, ir.IntType) else {ir.HalfType: 16, ir.FloatType: 32,
                                                               ir.DoubleType: 64}[type(scalar)])
    if bits != 8 * size:
        return None
    # loaded as the store's type and compared in it: LLVM's dependence analysis takes a load
    # and a store of one address in different types (a load of the bits, which instcombine
    # makes of a load and bitcast) as an unknown dependence, which keeps the loop scalar
    held = b.load(b.inttoptr(p, PTR), typ=t, align=1)
    data_accesses(table, [held])
    if isinstance(scalar, ir.IntType):
        same = b.icmp_unsigned("==", held, value)
    else:       # floats: equal, or both NaN; +0 and -0 count as equal (a race hidden, none invented)
        same = b.or_(b.fcmp_ordered("==", held, value),
                     b.and_(b.fcmp_unordered("uno", held, held), b.fcmp_unordered("uno", value, value)))
    if isinstance(t, ir.VectorType):
        same = b.icmp_unsigned("==", b.bitcast(same, ir.IntType(t.count)), ir.Constant(ir.IntType(t.count), -1))
    return same


def new_slot(table, g, at, site, size):
    """A race slot (its frame word) for a `__local` access site of kernel g.f (local_shadow.py),
    or None: past RACE_SLOTS, or not in a kernel. Its key: as a __global one, the other
    work-item's local linear id in the other id's bits."""
    if not g.f.is_kernel:
        return None
    slots = table.global_race_slots.setdefault(g.f.name, [])
    twin = table.twin_slot(slots, site, lambda s: s[0])
    if twin is None:
        if len(slots) >= RACE_SLOTS:
            return None
        twin = len(slots)
        slots.append((site, size, True))
    return at + _SLOTS + twin


def local_key(b, lin, code, other_lid, rel):
    """A `__local` race slot's key: (local linear id + 1) << 51 | kind code << 49 | the other
    work-item's local linear id << 34 | offset (i64 values)."""
    return b.or_(b.or_(b.shl(b.add(lin, I64(1)), I64(_KEY_LID)), b.shl(code, I64(_KEY_KIND))),
                 b.or_(b.shl(b.and_(other_lid, I64((1 << (_KEY_LID - _KEY_OTHER - 2)) - 1)), I64(_KEY_OTHER)),
                       b.and_(rel, I64((1 << _KEY_OFFSET_BITS) - 1))))


def keep(table, g, frame, slot, key):
    """The site's slot (the frame's word `slot`) keeps the largest key: a max over the
    work-item loop, which LLVM's vectoriser takes as a reduction where this store is made on
    every iteration. In a work-group function lowered in one piece (barriers.py) the slot is
    an alloca of that function instead (as table.py's site slots): the frame escapes, and a
    store to it under a work-item's `if` (the lockstep loop's) kept that loop scalar."""
    b = g.b
    if getattr(g, "whole_group", False):
        registers = table.race_slot_registers.setdefault(g.f.name, {})
        at = registers.get(slot)
        if at is None:
            at = registers[slot] = g.abuild.alloca(I64, name="check.race.slot")
            g.abuild.store(I64(0), at)
        old = b.load(at, typ=I64, align=8)
        b.store(b.select(b.icmp_unsigned(">", key, old), key, old), at)
        return
    slot = _word(b, frame, slot)
    old = frame_access(table, b.load(slot, typ=I64, align=8))
    frame_access(table, b.store(b.select(b.icmp_unsigned(">", key, old), key, old), slot))


def _slot_key(table, b, wp, rp, lanes, write, args, lin, rel, unchanged=None, arrays=None):
    """The tags of an access's `lanes` tags compared (one i32, or one vector) and set; returns
    the conflict's key (1: none), computed without a branch. arrays: the key of the access's
    tag arrays (tag_access)."""
    w_array, r_array = (None, None) if arrays is None else (arrays + ("w",), arrays + ("r",))
    vt = ir.VectorType(I32, lanes) if lanes > 1 else I32

    def splat(v):
        if lanes == 1:
            return v
        return b.shuffle_vector(b.insert_element(ir.Constant(vt, ir.Undefined), v, I32(0)),
                                ir.Constant(vt, ir.Undefined), ir.Constant(vt, [0] * lanes))

    def const(c):
        return ir.Constant(vt, [c] * lanes) if lanes > 1 else I32(c)
    me_v, first_v, volume_v, limit_v = (splat(v) for v in args)
    w = tag_access(table, b.load(wp, typ=vt, align=4), w_array)
    w_hit = _conflict(b, w, me_v, first_v, volume_v, limit_v, const)
    hit = w_hit
    if write:
        r = tag_access(table, b.load(rp, typ=vt, align=4), r_array)
        r_hit = _conflict(b, r, me_v, first_v, volume_v, limit_v, const)
        hit = b.or_(w_hit, r_hit)
    tag_access(table, b.store(me_v, wp if write else rp, align=4), w_array if write else r_array)
    any_hit = hit if lanes == 1 else \
        b.icmp_unsigned("!=", b.bitcast(hit, ir.IntType(lanes)), ir.Constant(ir.IntType(lanes), 0))
    if unchanged is not None:
        any_hit = b.and_(any_hit, b.not_(unchanged))

    # per tag: hit << 31 | writer's << 30 | the other's flat id, or 0 (whether it is of this
    # group, and its local id, are worked out once, at the group's end: group_end)
    value = b.select(w_hit, b.or_(b.and_(w, const(FLAT_MASK)), const(3 << 30)), const(0))
    if write:                                                         # (a writer's hit first)
        value = b.select(w_hit, value, b.select(r_hit, b.or_(b.and_(r, const(FLAT_MASK)), const(1 << 31)),
                                                const(0)))
    best = b.call(reduce_umax(b, lanes), [value]) if lanes > 1 else value
    best = b.zext(best, I64)
    code = I64(2) if not write else b.select(b.icmp_unsigned("!=", b.and_(best, I64(1 << 30)), I64(0)),
                                             I64(0), I64(1))
    key = b.or_(b.or_(b.shl(b.add(lin, I64(1)), I64(_KEY_LID)), b.shl(code, I64(_KEY_KIND))),
                b.or_(b.shl(b.and_(best, I64(FLAT_MASK)), I64(_KEY_OTHER)),
                      b.and_(rel, I64((1 << _KEY_OFFSET_BITS) - 1))))
    return b.select(any_hit, key, I64(1))


def joined_key(b, key, keyed_bb, skipped_bb):
    """A race check's conflict key at a join: `key` from keyed_bb, 1 (no conflict) from
    skipped_bb, where the check did not run."""
    phi = b.phi(I64)
    phi.add_incoming(key, keyed_bb)
    phi.add_incoming(I64(1), skipped_bb)
    return phi


def reduce_umax(b, size):
    m = b.module
    name = "llvm.vector.reduce.umax.v%di32" % size
    fn = m.globals.get(name)
    if fn is None:
        fn = ir.Function(m, ir.FunctionType(I32, [ir.VectorType(I32, size)]), name=name)
    return fn


def group_end(table, b, frame, k, wi, at):
    """At the work-group function's end: each race slot's conflict reported (CheckTable.report_key:
    through a copy of the work-item state holding the work-item's ids)."""
    slots = table.global_race_slots.get(k.name, [])
    if not slots:
        return
    fn = b.function
    end_bb = fn.append_basic_block("check.grace.end")
    wis = b.gep(wi, [I32(0), I32(0)], inbounds=True, source_etype=WI_TYPE)

    def slot(base, i):
        return b.gep(base, [I64(0), I64(i)], inbounds=True, source_etype=WI_SLOTS_TYPE)
    registers = table.race_slot_registers.get(k.name, {})
    for j, (site, size, local) in enumerate(slots):
        key = b.load(registers.get(at + _SLOTS + j) or _word(b, frame, at + _SLOTS + j), typ=I64, align=8)
        found_bb = fn.append_basic_block("check.grace.site")
        next_bb = fn.append_basic_block("check.grace.site.next")
        b.cbranch(b.icmp_unsigned(">=", key, I64(1 << _KEY_LID)), found_bb, next_bb)
        b.position_at_end(found_bb)
        kind = b.add(I64(KIND_WRITE_WRITE), b.and_(b.lshr(key, I64(_KEY_KIND)), I64(3)))
        offset = b.and_(key, I64((1 << _KEY_OFFSET_BITS) - 1))
        if local:           # (the other work-item: a local linear id)
            other = b.and_(b.lshr(key, I64(_KEY_OTHER)), I64((1 << (_KEY_LID - _KEY_OTHER - 2)) - 1))
            table.report_key(b, frame, wi, key, I64(site), offset, I64(size), kind, other, lid_shift=_KEY_LID)
            b.branch(end_bb)
            b.position_at_end(next_bb)
            continue
        volume = b.load(_word(b, frame, at + _VOLUME), typ=I64, align=8)
        groups = b.mul(b.mul(b.load(slot(wis, abi.CTX_NUM_GROUPS), typ=I64, align=8),
                             b.load(slot(wis, abi.CTX_NUM_GROUPS + 1), typ=I64, align=8)),
                       b.load(slot(wis, abi.CTX_NUM_GROUPS + 2), typ=I64, align=8))
        flat = b.and_(b.lshr(key, I64(_KEY_OTHER)), I64(FLAT_MASK))
        first = b.load(_word(b, frame, at + _GROUP_FIRST), typ=I64, align=8)
        in_group = b.and_(b.sub(flat, first), I64(FLAT_MASK))
        same_group = b.icmp_unsigned("<", in_group, volume)
        other = b.select(same_group, in_group, flat)
        same = b.zext(same_group, I64)
        exact = b.select(b.icmp_unsigned("<=", b.mul(groups, volume), I64(FLAT_MASK + 1)), I64(OTHER_EXACT), I64(0))
        word = b.or_(b.or_(other, b.shl(volume, I64(TAG_FLAT_BITS))),
                     b.or_(b.shl(same, I64(32)), exact))
        table.report_key(b, frame, wi, key, I64(site), offset, I64(size), kind, word, lid_shift=_KEY_LID)
        b.branch(end_bb)
        b.position_at_end(next_bb)
    b.branch(end_bb)
    b.position_at_end(end_bb)


def _conflict(b, tags, me, first, volume, limit, const):
    """Which tags are another work-item's of this launch, unordered with me (scalars or vectors
    alike; const(c): c in the operands' type)."""
    x = b.xor(tags, me)
    same_launch = b.icmp_unsigned("<", x, const(1 << TAG_SERIAL_SHIFT))
    other_item = b.icmp_unsigned("!=", b.and_(x, const(FLAT_MASK)), const(0))
    same_epoch = b.icmp_unsigned("<", x, limit)
    other_group = b.icmp_unsigned(">=", b.and_(b.sub(tags, first), const(FLAT_MASK)), volume)
    return b.and_(b.and_(same_launch, other_item), b.or_(same_epoch, other_group))


def start_function(table):
    """void start(launch state, record, number of kernel arguments): the launch's serials."""
    m = table.mg.module
    fn = m.globals.get(START)
    if fn is None:
        fn = ir.Function(m, ir.FunctionType(VOIDT, [PTR, PTR, I64]), name=START)
        fn.linkage = "internal"
        for a in ("noinline", "cold", "nounwind"):
            fn.attributes.add(a)
    return fn


def race_function(table):
    """void race(frame, wi, writers' tags, readers' tags, size, is write, site, offset, my tag,
    the group's first flat id, its volume, the epoch limit): the cold byte loop of an access
    whose inline compare found a conflict (or that is too large for it)."""
    m = table.mg.module
    fn = m.globals.get(RACE)
    if fn is None:
        fn = ir.Function(m, ir.FunctionType(VOIDT, [PTR, PTR, PTR, PTR, I64, I64, I64, I64, I32, I32, I32, I32]),
                         name=RACE)
        fn.linkage = "internal"
        for a in ("noinline", "cold", "nounwind"):
            fn.attributes.add(a)
    return fn


def finish(table):
    """The cold functions' bodies, where used."""
    fn = table.mg.module.globals.get(START)
    if fn is not None and not fn.blocks:
        _finish_start(table, fn)
    fn = table.mg.module.globals.get(RACE)
    if fn is not None and not fn.blocks:
        _finish_race(table, fn)


def _finish_start(table, fn):
    state, record, n = fn.args
    b = Builder(fn.append_basic_block("entry"))
    won = b.extract_value(b.cmpxchg(state, I64(0), I64(LAUNCH_STARTING), "acq_rel", "acquire"), 1)
    spin_bb = fn.append_basic_block("wait")
    loop_bb = fn.append_basic_block("argument")
    ready_bb = fn.append_basic_block("ready")
    out_bb = fn.append_basic_block("out")
    b.cbranch(won, loop_bb, spin_bb)
    b.position_at_end(spin_bb)                    # another group of the launch sets it up: wait
    b.cbranch(b.icmp_unsigned("==", b.load_atomic(state, "acquire", 8, typ=I64), I64(LAUNCH_READY)),
              out_bb, spin_bb)
    b.position_at_end(loop_bb)
    i = b.phi(I64)
    i.add_incoming(I64(0), fn.entry_basic_block)
    words = b.add(I64(rec_global_shadow(0, 0)), b.add(n, b.mul(i, I64(GS_WORDS))))
    header = b.load(_word(b, record, b.add(words, I64(GS_HEADER))), typ=I64, align=8)
    owner = b.load(_word(b, record, b.add(words, I64(GS_OWNER))), typ=I64, align=8)
    shared_bb = fn.append_basic_block("shared")
    own_bb = fn.append_basic_block("own")
    wrap_bb = fn.append_basic_block("wrap")
    set_bb = fn.append_basic_block("set")
    b.cbranch(b.or_(b.icmp_unsigned("==", header, I64(0)), b.icmp_unsigned("!=", owner, i)), shared_bb, own_bb)
    b.position_at_end(shared_bb)                  # not checked (0), or the serial of an earlier argument
    shared = b.select(b.icmp_unsigned("==", header, I64(0)), I64(0),
                      b.load(_word(b, state, b.add(owner, I64(1))), typ=I64, align=8))
    b.branch(set_bb)
    b.position_at_end(own_bb)
    hp = b.inttoptr(header, PTR)
    uses = b.atomic_rmw("add", _word(b, hp, SH_USES), I64(1), "monotonic")
    turn = b.urem(uses, I64(SERIALS))
    next_serial = b.add(turn, I64(1))
    b.cbranch(b.and_(b.icmp_unsigned("==", turn, I64(0)), b.icmp_unsigned("!=", uses, I64(0))), wrap_bb, set_bb)
    b.position_at_end(wrap_bb)                   # the serials start again: the old tags dropped
    madvise = b.load(_word(b, hp, SH_MADVISE), typ=I64, align=8)
    length = b.load(_word(b, hp, SH_TAG_BYTES), typ=I64, align=8)
    _call_madvise(b, madvise, hp, length)
    b.branch(set_bb)
    b.position_at_end(set_bb)
    serial = b.phi(I64)
    serial.add_incoming(shared, shared_bb)
    serial.add_incoming(next_serial, own_bb)
    serial.add_incoming(I64(1), wrap_bb)
    b.store(serial, _word(b, state, b.add(i, I64(1))))
    nxt = b.add(i, I64(1))
    i.add_incoming(nxt, set_bb)
    b.cbranch(b.icmp_unsigned("<", nxt, n), loop_bb, ready_bb)
    b.position_at_end(ready_bb)
    b._insert(ir.instructions.StoreAtomicInstr(b.block, I64(LAUNCH_READY), state, "release", 8))   # (opaque ptr)
    b.branch(out_bb)
    b.position_at_end(out_bb)
    b.ret_void()


def _call_madvise(b, address, hp, length):
    """madvise(tags, length, MADV_DONTNEED) through the address the core put in the header
    (`address`, an i64): anonymous private pages read as zeros again."""
    madvise = b.inttoptr(address, ir.FunctionType(I32, [PTR, I64, I32]).as_pointer())   # (LLVM reads: ptr)
    b.call(madvise, [b.gep(hp, [I64(SH_PAGE)], source_etype=ir.IntType(8)), length, I32(4)])


def _finish_race(table, fn):
    frame, wi, wp, rp, size, is_write, site, rel, me, first, volume, limit = fn.args
    b = Builder(fn.append_basic_block("entry"))
    writing = b.icmp_unsigned("!=", is_write, I64(0))
    entry = b.block
    loop = fn.append_basic_block("bytes")
    done = fn.append_basic_block("done")
    b.cbranch(b.icmp_unsigned("==", size, I64(0)), done, loop)
    b.position_at_end(loop)
    i = b.phi(I64)
    i.add_incoming(I64(0), entry)
    w_at = b.gep(wp, [i], source_etype=I32)
    r_at = b.gep(rp, [i], source_etype=I32)
    w = b.load(w_at, typ=I32, align=4)
    r = b.load(r_at, typ=I32, align=4)

    def conflict(tag):
        return _conflict(b, tag, me, first, volume, limit, lambda c: I32(c))
    w_hit, r_hit = conflict(w), conflict(r)
    kind = b.select(writing, b.select(w_hit, I64(KIND_WRITE_WRITE), I64(KIND_WRITE_AFTER_READ)),
                    I64(KIND_READ_AFTER_WRITE))
    hit = b.select(writing, b.or_(w_hit, r_hit), w_hit)
    culprit = b.select(b.and_(writing, b.not_(w_hit)), r, w)
    report_bb = fn.append_basic_block("conflict")
    tag_bb = fn.append_basic_block("tag")
    b.cbranch(hit, report_bb, tag_bb)
    b.position_at_end(report_bb)
    slots = b.gep(wi, [I32(0), I32(0)], inbounds=True, source_etype=WI_TYPE)

    def slot(j):
        return b.load(b.gep(slots, [I64(0), I64(j)], inbounds=True, source_etype=WI_SLOTS_TYPE), typ=I64, align=8)
    items = b.mul(b.mul(slot(abi.CTX_GLOBAL_SIZE), slot(abi.CTX_GLOBAL_SIZE + 1)), slot(abi.CTX_GLOBAL_SIZE + 2))
    in_group = b.and_(b.sub(culprit, first), I32(FLAT_MASK))
    same_group = b.icmp_unsigned("<", in_group, volume)
    flat = b.zext(b.select(same_group, in_group, b.and_(culprit, I32(FLAT_MASK))), I64)   # (local id, or flat id)
    other = b.or_(b.or_(flat, b.shl(b.zext(volume, I64), I64(TAG_FLAT_BITS))),
                  b.or_(b.select(same_group, I64(OTHER_SAME_GROUP), I64(0)),
                        b.select(b.icmp_unsigned("<=", items, I64(FLAT_MASK + 1)), I64(OTHER_EXACT), I64(0))))
    b.call(table.report_function(), [frame, wi, site, rel, size, kind, other])
    b.branch(done)
    b.position_at_end(tag_bb)
    b.store(me, b.select(writing, w_at, r_at), align=4)
    nxt = b.add(i, I64(1))
    i.add_incoming(nxt, tag_bb)
    b.cbranch(b.icmp_unsigned("<", nxt, size), loop, done)
    b.position_at_end(done)
    b.ret_void()

