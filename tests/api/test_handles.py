"""The handle table (pyplat/api/_native.pyx, through pyplat/api/handles.py): one entry per handle of
every kind, its memory laid out as icd/pyplat_handle.h says, found again only while it is live."""
import ctypes
import threading

import pytest

from pyplat import cl
from pyplat.api import handles
from pyplat.api.errors import CLError
from support.native import HandleStruct


class Thing:
    pass


class Other:
    pass


def test_a_handle_is_found_while_live_and_reads_dead_after():
    thing = Thing()
    h = handles.handle_of(thing, handles.SAMPLER)
    assert h and handles.handle_of(thing, handles.SAMPLER) == h and handles.handle_of(None, handles.MEM) == 0
    s = HandleStruct.from_address(h)
    assert (s.magic, s.kind) == (handles.MAGIC, handles.SAMPLER)
    assert handles.lookup(h, Thing, cl.CL_INVALID_SAMPLER) is thing and handles.peek(h) is thing
    with pytest.raises(CLError) as e:
        handles.lookup(h, Other, cl.CL_INVALID_SAMPLER)          # the wrong type of object
    assert e.value.code == cl.CL_INVALID_SAMPLER
    handles.forget(thing)
    assert s.magic == handles.DEAD and handles.peek(h) is None      # quarantined, not reused
    with pytest.raises(CLError):
        handles.lookup(h, Thing, cl.CL_INVALID_SAMPLER)
    assert handles.handle_of(thing, handles.SAMPLER) != h            # a new handle if asked again
    handles.forget(thing)


def test_foreign_pointers_are_not_handles():
    junk = ctypes.create_string_buffer(64)
    for address in (0, 1, ctypes.addressof(junk)):
        with pytest.raises(CLError):
            handles.lookup(address, object, cl.CL_INVALID_CONTEXT)


def test_set_dispatch_reaches_handles_made_before_and_after():
    before = Thing()
    h = handles.handle_of(before, handles.CONTEXT)
    old = handles.dispatch_address()
    fake = ctypes.create_string_buffer(8)
    try:
        handles.set_dispatch(ctypes.addressof(fake))
        after = Thing()
        h2 = handles.handle_of(after, handles.MEM)
        assert HandleStruct.from_address(h).dispatch == ctypes.addressof(fake)
        assert HandleStruct.from_address(h2).dispatch == ctypes.addressof(fake)
    finally:
        handles.set_dispatch(old)
        handles.forget(before)
        handles.forget(after)


def test_threads_making_handles_agree():
    things = [Thing() for _ in range(200)]
    results = [[] for _ in range(4)]

    def make(out):
        out.extend(handles.handle_of(t, handles.PROGRAM) for t in things)

    threads = [threading.Thread(target=make, args=(r,)) for r in results]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r == results[0] for r in results) and len(set(results[0])) == len(things)
    for t in things:
        handles.forget(t)
