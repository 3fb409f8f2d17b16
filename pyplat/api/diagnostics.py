"""Where an entry point's error goes besides its return code: with PYPLAT_DEBUG=err one stderr
line (entry point, error code by name, the reason the check that failed gave), and the notify
callback of the context the call was about, as the spec asks of errors at run time in a context
(clCreateContext's pfn_notify). Only failing calls come here: a call that succeeds pays
nothing."""
from pyplat import log
from pyplat.api import handles
from pyplat.api.errors import error_name


def entry_failed(name, error, args):
    """Entry point `name`, called with raw `args`, raised CLError `error`."""
    code = error_name(error.code)
    reason = str(error)
    message = f"{name} returned {code}" + (f": {reason}" if reason and reason != code else "")
    if log.on("err"):
        log.say("err", message)
    context = _context_of(args)
    if context is not None:
        context.notify_error(message)


def _context_of(args):
    """The context of the first handle among the call's first arguments (a context, or an
    object that belongs to one), or None. (An object the fast path made natively is adopted
    here: its context may have a pfn_notify, and errors are rare.)"""
    for value in args[:2]:
        if not isinstance(value, int) or not value:
            continue
        obj = handles.adopted(value)
        if obj is None:
            continue
        for path in (("context",), ("program", "context")):
            found = obj
            for attribute in path:
                found = getattr(found, attribute, None)
            if found is not None and hasattr(found, "notify_error"):
                return found
        if hasattr(obj, "notify_error"):
            return obj
    return None
