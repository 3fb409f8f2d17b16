"""PYPLAT_CHECK=uninit and races: shadow memory of a work-group's `__local` memory (docs/tools.md).

The core gives a checked kernel's launches more local memory than they use (core/checks.py,
layout.shadow_factor): after the group's `total` bytes (the check record's REC_LOCAL_TOTAL, a
multiple of 128) come, per local byte,
- uninit: one byte, 1 once a work-item of the group wrote it a defined value (definedness.py);
- races: two uint32 tags, the last writer's and the last reader's (all writers' tags, then all
  readers'): (barrier epoch mod 2^16) << 16 | (local linear id + 1), 0 for none; then the
  same per 4-byte word (word tags: the tag of the word at offset o at byte o of the writers'
  word tags, then the readers'), for accesses of whole aligned words.
The work-group function clears both in its prologue (so "written" means written in this group)
and starts the epoch at 1; each barrier adds one (table.CheckTable.barrier).

Every `__local` access that passed the bounds check then:
- uninit: a store sets its bytes' flags (clears them where its value is undefined); a load of
  up to 16 bytes whose flags are not all set gives an undefined value, which definedness.py
  follows to its uses (the load happens: the memory is there);
- races: a write conflicts with another work-item's write or read of one of its bytes in the
  same epoch, a read with another work-item's write; a conflict is a finding naming the other
  work-item. Accesses of whole aligned words (up to 16 bytes) compare and update their word
  tags inline and, without a branch, make the conflict's key, which the access's join keeps in
  a race slot of the frame (global_races.new_slot, keep; reported at the group's end):
  the loop over work-items stays vectorisable. Other accesses of up to 16 bytes compare their
  byte tags inline, as vectors; a conflict (or a larger access) goes to a cold loop,
  `__pyplat_check_race`, which finds the byte and reports.
Atomics and async copies are not tracked as accesses (an atomic does not race), but their
writes into `__local` memory count as written for uninit (mark_written).
"""
from llvmlite import ir

from .. import abi
from ..lowering.irbuild import I1, I8, I32, I64, PTR, VOIDT, WI_FRAME, WI_LID, WI_SLOTS_TYPE, WI_TYPE, Builder
from . import definedness, global_races, intervals
from .layout import (FR_EPOCH, FR_LOCAL, FR_LOCAL_TOTAL, FR_RECORD, FR_SHADOW_RACES, FR_SHADOW_UNINIT, FR_UNDEFINED,
                     KIND_READ_AFTER_WRITE, KIND_WRITE_AFTER_READ, KIND_WRITE_WRITE, RACE_BYTES, REC_LOCAL_TOTAL)

UNINIT, RACES = "uninit", "races"
RACE = "__pyplat_check_race"


def wanted(kinds):
    return UNINIT in kinds or RACES in kinds


def _word(b, frame, index):
    return b.gep(frame, [I64(index) if isinstance(index, int) else index], inbounds=True, source_etype=I64)


def _memset(table, b, ptr, byte, size):
    f = table.mg.intrinsic("llvm.memset.p0.i64", VOIDT, [PTR, I8, I64, I1])
    b.call(f, [ptr, I8(byte) if isinstance(byte, int) else byte, size, I1(0)])


def setup(table, b, frame, record, lm, has_local=True):
    """The prologue's part: the frame's local-memory and shadow addresses, shadows cleared
    (has_local: the kernel has __local objects; without, no access reaches the shadows)."""
    kinds = table.kinds
    b.store(b.ptrtoint(lm, I64), _word(b, frame, FR_LOCAL))
    b.store(I64(1), _word(b, frame, FR_EPOCH))
    b.store(I64(0), _word(b, frame, FR_SHADOW_UNINIT))
    b.store(I64(0), _word(b, frame, FR_SHADOW_RACES))
    b.store(I64(definedness.NONE), _word(b, frame, FR_UNDEFINED))
    if not wanted(kinds) or not has_local:
        return
    total = b.load(_word(b, record, REC_LOCAL_TOTAL), typ=I64, align=8)
    b.store(total, _word(b, frame, FR_LOCAL_TOTAL))
    shadow = b.gep(lm, [total], source_etype=I8)
    if UNINIT in kinds:
        _memset(table, b, shadow, 0, total)
        b.store(b.ptrtoint(shadow, I64), _word(b, frame, FR_SHADOW_UNINIT))
        shadow = b.gep(shadow, [total], source_etype=I8)
    if RACES in kinds:
        _memset(table, b, shadow, 0, b.mul(total, I64(RACE_BYTES)))
        b.store(b.ptrtoint(shadow, I64), _word(b, frame, FR_SHADOW_RACES))


def barrier(table, b, frame):
    """A barrier of the group: the next epoch (the tags are cleared when its 16 bits wrap)."""
    if RACES not in table.kinds:
        return
    epoch = b.add(b.load(_word(b, frame, FR_EPOCH), typ=I64, align=8), I64(1))
    wrapped = b.icmp_unsigned("==", b.and_(epoch, I64(0xFFFF)), I64(0))
    fn = b.function
    clear_bb = fn.append_basic_block("check.epoch.wrap")
    on_bb = fn.append_basic_block("check.epoch")
    before = b.block
    b.cbranch(wrapped, clear_bb, on_bb)
    b.position_at_end(clear_bb)
    record = b.inttoptr(b.load(_word(b, frame, FR_RECORD), typ=I64, align=8), PTR)
    total = b.load(_word(b, record, REC_LOCAL_TOTAL), typ=I64, align=8)
    shadow = b.inttoptr(b.load(_word(b, frame, FR_SHADOW_RACES), typ=I64, align=8), PTR)
    _memset(table, b, shadow, 0, b.mul(total, I64(RACE_BYTES)))
    skipped = b.add(epoch, I64(1))           # (epoch 0 mod 2^16 would look like "no tag")
    b.branch(on_bb)
    b.position_at_end(on_bb)
    phi = b.phi(I64)
    phi.add_incoming(epoch, before)
    phi.add_incoming(skipped, clear_bb)
    b.store(phi, _word(b, frame, FR_EPOCH))


def local_access(table, g, frame, p, size, base, site, write, atomic=False, stored=None, align=1, slots_at=None,
                 free=False, written=False):
    """The shadow checks of a __local access of `size` bytes at address p (an i64) that passed
    the bounds check; base: its object's address (offsets in findings), None: unknown. An
    atomic access only sets uninit's flags. Returns (undefined, race): undefined, for uninit's
    load of up to 16 bytes, an i1: some of its bytes are not defined (the value is undefined:
    definedness.py), else None; race: (the conflict's key, its slot) for the caller to keep
    (global_races.keep) at the access's join, else None. stored: a store's value's
    shadow (not None: undefined where not 0). align: the address's known alignment; slots_at:
    the frame word of the race slots (global_races). free: True where the access cannot
    race (intervals.py): no race check; intervals.ONE_ROW: a race check that runs only
    in groups with more than one row. written: a read whose bytes are surely written with
    defined values (local_written.py): no flag load, its value is defined; a write that finds
    its bytes so and writes a defined value: no flag store (it would change nothing)."""
    kinds = table.kinds
    b = g.b
    lm = table._invariant(b.load(_word(b, frame, FR_LOCAL), typ=I64, align=8))
    off = b.sub(p, lm)
    rel = off if base is None else b.sub(p, base)
    undefined = None
    if UNINIT in kinds:
        flags = b.gep(b.inttoptr(table._invariant(b.load(_word(b, frame, FR_SHADOW_UNINIT), typ=I64, align=8)),
                                 PTR), [off], source_etype=I8)
        # (the flags are an array of their own for LLVM's alias analysis, as the race tags
        # are: else it compares them with the tags and the data at run time before each
        # vectorised loop over work-items, and the transpose's rows of 16 work-items were too
        # short for the checks it then wanted to pay for: the loop ran scalar)
        width = ir.IntType(8 * size) if size <= 16 else None
        if write and written and not atomic:
            pass                # (its flags say defined already, and it writes a defined value)
        elif width is not None and (write or atomic):
            # (one integer store: a memset of a value not constant stays a call, which keeps
            # the loop over work-items from the vectoriser)
            every = ir.Constant(width, int("01" * size, 16))
            value = every if stored is None or atomic else \
                b.select(b.icmp_unsigned("==", stored, I32(0)), every, ir.Constant(width, 0))
            global_races.tag_access(table, b.store(value, flags, align=1), ("local", "uninit"))
        elif write or atomic:
            _memset(table, b, flags, I8(1) if stored is None or atomic else
                    b.zext(b.icmp_unsigned("==", stored, I32(0)), I8), I64(size))
        elif width is not None and not written:
            got = global_races.tag_access(table, b.load(flags, typ=width, align=1), ("local", "uninit"))
            undefined = b.icmp_unsigned("!=", got, ir.Constant(width, int("01" * size, 16)))
    race = None
    if RACES in kinds and not atomic and free is not True:
        skip_bb = None
        if free == intervals.ONE_ROW:      # (groups of one row cannot race here)
            rows = b.mul(g.wi_slot(abi.CTX_LOCAL_SIZE + 1), g.wi_slot(abi.CTX_LOCAL_SIZE + 2))
            entry_bb = b.block
            check_bb = b.function.append_basic_block("check.rows")
            skip_bb = b.function.append_basic_block("check.rows.done")
            b.cbranch(b.icmp_unsigned("==", rows, I64(1)), skip_bb, check_bb)
            b.position_at_end(check_bb)
        slot = None
        if size % 4 == 0 and align >= 4 and size <= 16 and slots_at is not None:
            slot = global_races.new_slot(table, g, slots_at, site, size)
        if slot is not None:
            race = (_word_race(table, g, frame, off, size, write, rel), slot)
        elif size <= 16:
            _inline_race(table, g, frame, off, size, write, site, rel)
        else:
            b.call(race_function(table), [frame, g.wi, off, I64(size), I64(1 if write else 0), I64(site), rel])
        if skip_bb is not None:
            checked_bb = b.block
            b.branch(skip_bb)
            b.position_at_end(skip_bb)
            if race is not None:
                race = (global_races.joined_key(b, race[0], checked_bb, entry_bb), race[1])
    return undefined, race


def _word_race(table, g, frame, off, size, write, rel):
    """The races check of an access of whole aligned words (size <= 16) through the word
    tags: compared (one i32, or a vector) and set, without a branch; returns the conflict's
    key (global_races.local_key), 1 where none."""
    b = g.b
    lanes = size // 4
    vt = I32 if lanes == 1 else ir.VectorType(I32, lanes)
    tags = b.inttoptr(table._invariant(b.load(_word(b, frame, FR_SHADOW_RACES), typ=I64, align=8)), PTR)
    total = table._invariant(b.load(_word(b, frame, FR_LOCAL_TOTAL), typ=I64, align=8))
    words = b.gep(tags, [b.mul(total, I64(8))], source_etype=I8)      # (after the byte tags)
    wp = b.gep(words, [off], source_etype=I8)
    rp = b.gep(words, [b.add(total, off)], source_etype=I8)
    epoch = b.and_(global_races.frame_access(table, b.load(_word(b, frame, FR_EPOCH), typ=I64, align=8)),
                   I64(0xFFFF))
    ls = [g.wi_slot(abi.CTX_LOCAL_SIZE + d) for d in range(2)]
    lid = [g.wi_slot(WI_LID + d) for d in range(3)]
    lin = b.add(lid[0], b.mul(ls[0], b.add(lid[1], b.mul(ls[1], lid[2]))))
    me_id = b.and_(b.add(lin, I64(1)), I64(0xFFFF))

    def splat(v):
        v = b.trunc(v, I32)
        if lanes == 1:
            return v
        return b.shuffle_vector(b.insert_element(ir.Constant(vt, ir.Undefined), v, I32(0)),
                                ir.Constant(vt, ir.Undefined), ir.Constant(ir.VectorType(I32, lanes), [0] * lanes))

    def const(c):
        return I32(c) if lanes == 1 else ir.Constant(vt, [c] * lanes)
    e_v, id_v = splat(epoch), splat(me_id)
    me = b.or_(b.shl(e_v, const(16)), id_v)

    def others(t):
        # lanes holding another work-item's tag of this epoch: the tag differs from mine in the
        # id's 16 bits only (0 < t ^ me < 2^16). No tag of this epoch has id 0: ids are local
        # linear id + 1, and groups are smaller than 2^16 (device limits); cleared tags are of
        # epoch 0, which is skipped (local_shadow.barrier).
        return b.icmp_unsigned("<", b.sub(b.xor(t, me), const(1)), const(0xFFFF))
    w = global_races.tag_access(table, b.load(wp, typ=vt, align=4), ("local", "w"))
    w_other = others(w)
    # per lane: a writer's id | 1 << 16, else a reader's id (write only), else 0
    value = b.select(w_other, b.or_(b.and_(w, const(0xFFFF)), const(1 << 16)), const(0))
    if write:
        r = global_races.tag_access(table, b.load(rp, typ=vt, align=4), ("local", "r"))
        value = b.select(w_other, value, b.select(others(r), b.and_(r, const(0xFFFF)), const(0)))
    global_races.tag_access(table, b.store(me, wp if write else rp, align=4), ("local", "w" if write else "r"))
    if lanes > 1:
        value = b.call(global_races.reduce_umax(b, lanes), [value])
    best = b.zext(value, I64)
    code = I64(2) if not write else b.select(b.icmp_unsigned("!=", b.and_(best, I64(1 << 16)), I64(0)),
                                             I64(0), I64(1))
    key = global_races.local_key(b, lin, code, b.sub(b.and_(best, I64(0xFFFF)), I64(1)), rel)
    return b.select(b.icmp_unsigned("!=", best, I64(0)), key, I64(1))


def _inline_race(table, g, frame, off, size, write, site, rel):
    """The races check of an access of `size` (<= 16) bytes: its bytes' tags compared as one
    vector; a conflict goes to the cold loop (which reports it), else the tags are updated."""
    b = g.b
    vt = ir.VectorType(I32, size)
    writers = b.inttoptr(table._invariant(b.load(_word(b, frame, FR_SHADOW_RACES), typ=I64, align=8)), PTR)
    total = table._invariant(b.load(_word(b, frame, FR_LOCAL_TOTAL), typ=I64, align=8))
    wp = b.gep(writers, [off], source_etype=I32)
    rp = b.gep(writers, [b.add(total, off)], source_etype=I32)
    epoch = b.and_(b.load(_word(b, frame, FR_EPOCH), typ=I64, align=8), I64(0xFFFF))
    ls = [g.wi_slot(abi.CTX_LOCAL_SIZE + d) for d in range(2)]
    lid = [g.wi_slot(WI_LID + d) for d in range(3)]
    me_id = b.and_(b.add(b.add(lid[0], b.mul(ls[0], b.add(lid[1], b.mul(ls[1], lid[2])))), I64(1)), I64(0xFFFF))
    me = b.trunc(b.or_(b.shl(epoch, I64(16)), me_id), I32)

    def splat(v):
        return b.shuffle_vector(b.insert_element(ir.Constant(vt, ir.Undefined), v, I32(0)),
                                ir.Constant(vt, ir.Undefined), ir.Constant(ir.VectorType(I32, size), [0] * size))
    e_v, me_v = splat(b.trunc(epoch, I32)), splat(b.trunc(me_id, I32))
    low = ir.Constant(vt, [0xFFFF] * size)

    def others(tags):           # lanes holding another work-item's tag of this epoch
        ids = b.and_(tags, low)
        return b.and_(b.icmp_unsigned("==", b.lshr(tags, ir.Constant(vt, [16] * size)), e_v),
                      b.and_(b.icmp_unsigned("!=", ids, ir.Constant(vt, [0] * size)),
                             b.icmp_unsigned("!=", ids, me_v)))
    hit = others(b.load(wp, typ=vt, align=4))
    if write:
        hit = b.or_(hit, others(b.load(rp, typ=vt, align=4)))
    conflict = b.icmp_unsigned("!=", b.bitcast(hit, ir.IntType(size)), ir.Constant(ir.IntType(size), 0))
    slow_bb = g.fn.append_basic_block("check.race")
    tag_bb = g.fn.append_basic_block("check.race.tag")
    on_bb = g.fn.append_basic_block("check.race.done")
    b.cbranch(conflict, slow_bb, tag_bb)
    b.position_at_end(slow_bb)
    b.call(race_function(table), [frame, g.wi, off, I64(size), I64(1 if write else 0), I64(site), rel])
    b.branch(on_bb)
    b.position_at_end(tag_bb)
    b.store(splat(me), wp if write else rp, align=4)
    b.branch(on_bb)
    b.position_at_end(on_bb)


def mark_written(table, g, ptr, nbytes):
    """A builtin wrote nbytes (an i64 value) at ptr in __local memory: uninit's flags set."""
    if UNINIT not in table.kinds:
        return
    b = g.b
    frame = b.load(b.gep(g.wi, [I32(0), I32(WI_FRAME)], inbounds=True, source_etype=WI_TYPE), typ=PTR, align=8)
    off = b.sub(b.ptrtoint(ptr, I64), b.load(_word(b, frame, FR_LOCAL), typ=I64, align=8))
    shadow = b.inttoptr(b.load(_word(b, frame, FR_SHADOW_UNINIT), typ=I64, align=8), PTR)
    _memset(table, b, b.gep(shadow, [off], source_etype=I8), 1, nbytes)


def race_function(table):
    """void race(frame, wi, offset in local memory, size, is write, site, offset in the object)."""
    m = table.mg.module
    fn = m.globals.get(RACE)
    if fn is None:
        fn = ir.Function(m, ir.FunctionType(VOIDT, [PTR, PTR, I64, I64, I64, I64, I64]), name=RACE)
        fn.linkage = "internal"
        for a in ("noinline", "nounwind"):
            fn.attributes.add(a)
    return fn


def finish(table):
    """The race function's body, if it is used."""
    fn = table.mg.module.globals.get(RACE)
    if fn is None or fn.blocks:
        return
    frame, wi, off, size, is_write, site, rel = fn.args
    b = Builder(fn.append_basic_block("entry"))
    slots = b.gep(wi, [I32(0), I32(0)], inbounds=True, source_etype=WI_TYPE)

    def slot(i):
        return b.load(b.gep(slots, [I64(0), I64(i)], inbounds=True, source_etype=WI_SLOTS_TYPE), typ=I64, align=8)
    ls = [slot(abi.CTX_LOCAL_SIZE + d) for d in range(3)]
    lid = [slot(WI_LID + d) for d in range(3)]
    me_id = b.add(b.add(b.mul(b.add(b.mul(lid[2], ls[1]), lid[1]), ls[0]), lid[0]), I64(1))
    epoch = b.and_(b.load(_word(b, frame, FR_EPOCH), typ=I64, align=8), I64(0xFFFF))
    me = b.trunc(b.or_(b.shl(epoch, I64(16)), b.and_(me_id, I64(0xFFFF))), I32)
    e32 = b.trunc(epoch, I32)
    me16 = b.trunc(b.and_(me_id, I64(0xFFFF)), I32)
    tags = b.inttoptr(b.load(_word(b, frame, FR_SHADOW_RACES), typ=I64, align=8), PTR)
    total = b.load(_word(b, frame, FR_LOCAL_TOTAL), typ=I64, align=8)
    writing = b.icmp_unsigned("!=", is_write, I64(0))
    entry = b.block
    loop = fn.append_basic_block("bytes")
    done = fn.append_basic_block("done")
    b.cbranch(b.icmp_unsigned("==", size, I64(0)), done, loop)
    b.position_at_end(loop)
    i = b.phi(I64)
    i.add_incoming(I64(0), entry)
    at = b.add(off, i)
    wp = b.gep(tags, [at], source_etype=I32)
    rp = b.gep(tags, [b.add(at, total)], source_etype=I32)
    w = b.load(wp, typ=I32, align=4)
    r = b.load(rp, typ=I32, align=4)

    def other(tag):             # another work-item's tag of this epoch
        return b.and_(b.icmp_unsigned("==", b.lshr(tag, I32(16)), e32),
                      b.and_(b.icmp_unsigned("!=", b.and_(tag, I32(0xFFFF)), I32(0)),
                             b.icmp_unsigned("!=", b.and_(tag, I32(0xFFFF)), me16)))
    w_other, r_other = other(w), other(r)
    kind = b.select(writing, b.select(w_other, I64(KIND_WRITE_WRITE), I64(KIND_WRITE_AFTER_READ)),
                    I64(KIND_READ_AFTER_WRITE))
    conflict = b.select(writing, b.or_(w_other, r_other), w_other)
    culprit = b.select(b.and_(writing, b.not_(w_other)), r, w)
    report_bb = fn.append_basic_block("conflict")
    tag_bb = fn.append_basic_block("tag")
    b.cbranch(conflict, report_bb, tag_bb)
    b.position_at_end(report_bb)
    b.call(table.report_function(), [frame, wi, site, rel, size, kind,
                                     b.sub(b.zext(b.and_(culprit, I32(0xFFFF)), I64), I64(1))])
    b.branch(done)
    b.position_at_end(tag_bb)
    b.store(me, b.select(writing, wp, rp), align=4)
    nxt = b.add(i, I64(1))
    i.add_incoming(nxt, tag_bb)
    b.cbranch(b.icmp_unsigned("<", nxt, size), loop, done)
    b.position_at_end(done)
    b.ret_void()
