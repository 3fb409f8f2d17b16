# Part of pyplat/api/_native.pyx (included there, before the entries that refuse requests).
# ---------------------------------------------------------------------------------------------
# A native entry's refusal of a request (PoCL's POCL_RETURN_ERROR_ON): the entry returns the
# rule's error code itself -- it does not hand the request to the Python entry to be refused
# again -- and the rule's reason goes where every error's reason goes (api/diagnostics.py:
# PYPLAT_DEBUG=err, the context's pfn_notify), through the reporter the bridge installs.
# Reporting takes the GIL: errors are rare, and their formatting is written once, in Python.
# ---------------------------------------------------------------------------------------------

cdef object refusal_reporter = None   # (entry name, code, reason, (handles the call named))


def set_refusal_reporter(reporter):
    global refusal_reporter
    refusal_reporter = reporter


cdef void report_refusal(const char *entry, const refusal_t *why, size_t first, size_t second) noexcept with gil:
    if refusal_reporter is None:
        return
    try:
        refusal_reporter(entry.decode(), why.code, refusal_reason(why), (first, second))
    except BaseException:
        pass                                  # (reporting an error must not become one)


cdef int32_t refused(const char *entry, const refusal_t *why, size_t first, size_t second) noexcept nogil:
    """Return why's code from `entry`, called with the handles `first` and `second`, having
    reported why (call it holding no lock: it takes the GIL)."""
    report_refusal(entry, why, first, second)
    return why.code


cdef object refusal_of(int passed, refusal_t *why):
    """What a rule's face gives the Python entries: None if it passed, else its (code, reason)."""
    return None if passed else (why.code, refusal_reason(why))
