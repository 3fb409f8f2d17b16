"""The on-disk cache of compiled programs (packages, objects.py).

The cache (``PYPLAT_CACHE_DIR``, default ``$XDG_CACHE_HOME/pyplat`` or ``~/.cache/pyplat``;
``PYPLAT_CACHE_DIR=off`` disables it) keys each entry on sha256(environment, header, options,
source); an entry is used only if every file the program included still has the recorded hash,
so a changed header or ``#include``d file is a miss. Entries are written to a temporary file in
the same directory and renamed into place (``os.replace``), so concurrent processes never see a
partial entry.

Integrity: an entry is a package (objects.py) and carries a sha256 of all its bytes and the key
it was made for (``origin``). ``load`` checks both (and the environment) before any byte reaches
llvmlite; an entry that fails (truncated, zeroed, bit-flipped, another key's entry moved or
copied here) is deleted, counted in ``stats()["discarded"]`` and treated as a miss, so the build
compiles from source and stores a good entry in its place.
"""
import hashlib
import os
import struct
import tempfile
import threading

from .. import config
from .environment import environment
from .objects import unpack_package

_stats = {"hits": 0, "misses": 0, "stores": 0, "discarded": 0}
_stats_lock = threading.Lock()


def _new_lock_after_fork():
    """A thread that held the lock at fork() does not exist in the child."""
    global _stats_lock
    _stats_lock = threading.Lock()


os.register_at_fork(after_in_child=_new_lock_after_fork)


def _count(name):
    with _stats_lock:
        _stats[name] += 1


def stats():
    """Counters of this process: hits, misses, stores, and discarded (entries that failed their
    checksum, key or format check and were deleted)."""
    with _stats_lock:
        return dict(_stats)


def _sha(data):
    return hashlib.sha256(data).hexdigest()


def _file_sha(path):
    try:
        with open(path, "rb") as f:
            return _sha(f.read())
    except OSError:
        return None


def key(source, options, header):
    """Cache key: environment + header contents + source + options."""
    h = hashlib.sha256()
    for part in (environment(), _file_sha(header) or "", options or "", source):
        data = part.encode("utf-8", "surrogateescape") if isinstance(part, str) else part
        h.update(struct.pack("<Q", len(data)) + data)
    return h.hexdigest()


def includes_fresh(meta):
    for path, sha in meta.get("includes", []):
        if _file_sha(path) != sha:
            return False
    return True


def include_hashes(paths):
    return [[p, _file_sha(p)] for p in sorted(set(paths)) if p]


# ----------------------------------------------------------------------------- the directory
def cache_dir():
    """The cache directory, or None when PYPLAT_CACHE_DIR turns the cache off (pyplat/config.py)."""
    return config.value("PYPLAT_CACHE_DIR")


def load(k):
    """(meta, object code, entry bytes) of the entry stored under key k, verified (checksum,
    origin == k, environment), or None: a miss."""
    d = cache_dir()
    if d is None:
        return None
    path = os.path.join(d, k[:2], k)
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            data = f.read()
    except OSError:
        _count("misses")
        return None
    r = unpack_package(data)
    if r is None or r[0].get("origin") != k:
        _discard(path, st)
        _count("misses")
        return None
    if not includes_fresh(r[0]):
        _count("misses")          # stale, not broken: the rebuild overwrites it
        return None
    _count("hits")
    return r[0], r[1], data


def _discard(path, st):
    """Delete a bad entry, unless another process has already replaced it (os.replace gives
    the path a new inode)."""
    _count("discarded")
    try:
        now = os.stat(path)
        if (now.st_ino, now.st_dev) == (st.st_ino, st.st_dev):
            os.unlink(path)
    except OSError:
        pass


def store(k, data):
    d = cache_dir()
    if d is None:
        return
    sub = os.path.join(d, k[:2])
    try:
        os.makedirs(sub, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=sub, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, os.path.join(sub, k))
            _count("stores")
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError:
        pass        # a read-only or full cache directory only costs the next build
