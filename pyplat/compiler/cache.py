"""The on-disk cache of compiled programs (packages, objects.py).

The cache (``PYPLAT_CACHE_DIR``, default ``$XDG_CACHE_HOME/pyplat`` or ``~/.cache/pyplat``;
``PYPLAT_CACHE_DIR=off`` disables it) keys each entry on sha256(environment, header, options,
what the compiler sees of the source): the source's normal form (sourcekey.py: comments gone,
whitespace runs one space or one newline, literals exact), so an edit of comments or spacing
finds the entry; a source that can see its own line numbers (``__LINE__``, ``#line``) or that the
normal form does not cover is keyed on its exact text. An entry is used only if every file the
program included still has the recorded hash, so a changed header or ``#include``d file is a
miss; a program that may include files is keyed on the working directory too (quoted includes
and relative ``-I`` resolve against it). A header created after the build earlier in the search
path than the one found is not noticed (docs/soundness.md). Each entry records the sha256 of the exact source it was built from (``source``); the build
log's ``<source>:line:col`` positions are kept as significant-character indices (``log_marks``)
and moved onto the edited source on a hit. An entry whose build saw line numbers after all (an
included file uses ``__LINE__``), or whose log points where no index can (into a comment), or
that carries other source positions (meta ``lines``), is ``exact_only``: it serves only the
source it was built from. Entries are written to a temporary file in
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

from .. import config, log
from .environment import environment
from .objects import unpack_package
from . import sourcekey

_stats = {"hits": 0, "misses": 0, "stores": 0, "discarded": 0}
_stats_lock = threading.Lock()


def _new_lock_after_fork():
    """A thread that held the lock at fork() does not exist in the child."""
    global _stats_lock
    _stats_lock = threading.Lock()


os.register_at_fork(after_in_child=_new_lock_after_fork)


def _count(name, key=None, why=""):
    with _stats_lock:
        _stats[name] += 1
    if key is not None and log.on("cache"):
        word = {"hits": "hit", "misses": "miss", "stores": "stored"}.get(name, name)
        log.say("cache", f"{word} {key[:16]}" + (f" ({why})" if why else ""))


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


def _digest(parts):
    h = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8", "surrogateescape") if isinstance(part, str) else part
        h.update(struct.pack("<Q", len(data)) + data)
    return h.hexdigest()


def key(source, options, header):
    """Cache key: environment + header contents + options + the source's normal form
    (sourcekey.py), or its exact text when it has none (it sees its line numbers, or options
    do, e.g. -DL=__LINE__)."""
    form = None if sourcekey.sees_lines(options or "") else sourcekey.normal_form(_text(source))
    where = _search_dir(source, options)
    if form is None:
        return _digest((environment(), _file_sha(header) or "", options or "", where, "exact", source))
    text, literals = form
    return _digest([environment(), _file_sha(header) or "", options or "", where, "normal", text] + literals)


def _search_dir(source, options):
    """The working directory, for a program that may include files: a quoted #include and a
    relative -I resolve against it, so the same text and options built elsewhere may include
    other files (the recorded hashes check only the files found then). Else ""."""
    if "include" in _text(source) or "include" in (options or ""):
        try:
            return "cwd=" + os.getcwd()
        except OSError:
            return "cwd=?"
    return ""


def _text(source):
    return source.decode("utf-8", "surrogateescape") if isinstance(source, bytes) else source


def source_sha(source):
    return _sha(source if isinstance(source, bytes) else source.encode("utf-8", "surrogateescape"))


def source_record(source, log, includes, extra_positions=False):
    """What an entry records of its source: its sha256, the log's positions as indices, and
    whether it may serve only this exact source (see the module's docstring)."""
    rec = {"source": source_sha(source)}
    marks = sourcekey.log_marks(log, _text(source))
    if marks:
        rec["log_marks"] = marks
    if marks is None or extra_positions or any(_sees_lines_file(p) for p in includes):
        rec["exact_only"] = True
    return rec


def _sees_lines_file(path):
    try:
        with open(path, "rb") as f:
            return sourcekey.uses_line_macros(f.read().decode("utf-8", "surrogateescape"))
    except OSError:
        return True


def for_source(meta, obj, source):
    """(meta, obj, moved) of a hit for this source: meta with the log moved onto the source when
    the entry was built from another text of the same normal form and its log names positions
    (moved True: the package must be packed again), or None when the entry serves only its own
    exact source."""
    if not meta.get("exact_only") and not meta.get("log_marks"):
        return meta, obj, False       # nothing in it depends on the text: no hash needed
    sha = source_sha(source)
    if meta.get("source", sha) == sha:
        return meta, obj, False
    if meta.get("exact_only"):
        return None
    meta = dict(meta, source=sha)
    meta["log"] = sourcekey.moved_log(meta["log"], meta["log_marks"], _text(source))
    return meta, obj, True


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


def load(k, source=None):
    """(meta, object code, entry bytes) of the entry stored under key k, verified (checksum,
    origin == k, environment), or None: a miss. source: the program's exact text; an entry
    built from another text of its normal form comes back with its log moved onto this one and
    entry bytes None (pack it again), an exact_only entry of another text is a miss."""
    d = cache_dir()
    if d is None:
        return None
    path = os.path.join(d, k[:2], k)
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            data = f.read()
    except OSError:
        _count("misses", k, "no entry")
        return None
    r = unpack_package(data)
    if r is None or r[0].get("origin") != k:
        _discard(path, st)
        _count("misses", k, "entry failed its checks, deleted")
        return None
    if not includes_fresh(r[0]):
        _count("misses", k, "an included file changed")  # stale: the rebuild overwrites it
        return None
    if source is not None:
        same = for_source(r[0], r[1], source)
        if same is None:
            _count("misses", k, "built from a text whose line numbers differ")  # (rebuilt over)
            return None
        if same[2]:
            _count("hits", k, "same tokens, another text")
            return same[0], same[1], None
    _count("hits", k)
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
            _count("stores", k)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError:
        pass        # a read-only or full cache directory only costs the next build
