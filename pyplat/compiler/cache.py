"""The on-disk cache of compiled programs (packages, objects.py).

The cache (``PYPLAT_CACHE_DIR``, default ``$XDG_CACHE_HOME/pyplat`` or ``~/.cache/pyplat``;
``PYPLAT_CACHE_DIR=off`` disables it) keys each entry on sha256(environment, header, options,
source); an entry is used only if every file the program included still has the recorded hash,
so a changed header or ``#include``d file is a miss. Entries are written to a temporary file in
the same directory and renamed into place (``os.replace``), so concurrent processes never see a
partial entry.
"""
import hashlib
import os
import struct
import tempfile

from .. import config
from .environment import environment
from .objects import unpack_package


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
    d = cache_dir()
    if d is None:
        return None
    try:
        with open(os.path.join(d, k[:2], k), "rb") as f:
            data = f.read()
    except OSError:
        return None
    r = unpack_package(data)
    if r is None or not includes_fresh(r[0]):
        return None
    return r


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
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError:
        pass        # a read-only or full cache directory only costs the next build
