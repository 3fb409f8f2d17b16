"""How OpenCL ICD loaders find PyPlat.

A loader (ocl-icd, the Khronos loader, the ocl-icd inside pyopencl's wheels) reads ``*.icd`` files,
each holding the path of one vendor library, from a vendors directory: ``/etc/OpenCL/vendors``
unless ``OCL_ICD_VENDORS`` names another one. Setting ``OCL_ICD_VENDORS`` *replaces* the system
directory (ocl-icd 2.3 and pyopencl's bundled copy take one directory or one ``.icd`` file, no
list), so to add PyPlat without hiding the installed platforms we point it at a *merged*
directory: ``pyplat.icd`` plus copies of the ``.icd`` files the loader would otherwise have read.
See docs/icd.md.

Nothing here imports the rest of PyPlat but `pyplat.config` (which imports nothing of it): this
runs in processes that never load the platform.
"""
import hashlib
import os
import sys
import tempfile
from pathlib import Path

from pyplat import config

ICD_NAME = "pyplat.icd"
LIBRARY_NAME = "libpyplat-icd.so"
SYSTEM_VENDORS = Path("/etc/OpenCL/vendors")


# --- The library --------------------------------------------------------------------------------

def shim_path():
    """Absolute path of the ICD library (libpyplat-icd.so) of this installation.

    Looked for next to this package (``pyplat/_icd/``), then, when this package is a source
    checkout, in the installed distribution; ``PYPLAT_ICD_LIBRARY`` overrides both.
    """
    override = config.value("PYPLAT_ICD_LIBRARY")
    if override:
        return Path(override).resolve()
    here = Path(__file__).resolve().parent / "_icd" / LIBRARY_NAME
    if here.is_file():
        return here
    try:
        from importlib import metadata
        located = Path(metadata.distribution("pyplat").locate_file(f"pyplat/_icd/{LIBRARY_NAME}"))
        if located.is_file():
            return located.resolve()
    except Exception:
        pass
    raise FileNotFoundError(
        f"{LIBRARY_NAME} not found next to {Path(__file__).parent} nor in an installed pyplat: "
        "install PyPlat (pip install .) or set PYPLAT_ICD_LIBRARY")


def icd_text(library=None):
    return f"{library or shim_path()}\n"


# --- Directories --------------------------------------------------------------------------------

def cache_dir():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "pyplat"


def _tag(library):
    # One directory per installation: two environments sharing a cache dir must not overwrite
    # each other's pyplat.icd.
    return hashlib.sha1(str(library).encode()).hexdigest()[:12]


def system_vendors_dir(environ=None):
    """The directory a loader reads when OCL_ICD_VENDORS is not set (ocl-icd honours
    OPENCL_VENDOR_PATH as its replacement)."""
    environ = os.environ if environ is None else environ
    return Path(environ.get("OPENCL_VENDOR_PATH") or SYSTEM_VENDORS)


def _write_atomic(path, text):
    path = Path(path)
    try:
        if path.read_text() == text:
            return
    except OSError:
        pass
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".part")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def vendors_dir(library=None):
    """A directory holding only pyplat.icd: ``OCL_ICD_VENDORS=<it>`` shows PyPlat alone."""
    library = Path(library or shim_path())
    d = cache_dir() / "vendors" / _tag(library)
    d.mkdir(parents=True, exist_ok=True)
    _write_atomic(d / ICD_NAME, icd_text(library))
    return d


def _icd_target(text):
    line = text.strip().splitlines()[0].strip() if text.strip() else ""
    return line


def _is_pyplat(target):
    return os.path.basename(target) == LIBRARY_NAME


def _existing_icds(environ):
    """(name, content) of the .icd entries the loader would read without us: the user's
    OCL_ICD_VENDORS (a directory, a .icd file, or a library path), then the system directory."""
    found = []
    user = environ.get("OCL_ICD_VENDORS")
    sources = []
    if user:
        p = Path(user)
        if p.is_dir():
            sources.append(p)
        elif user.endswith(".icd"):
            p = p if p.is_absolute() or "/" in user else system_vendors_dir(environ) / user
            try:
                found.append((p.name, p.read_text()))
            except OSError:
                pass
        else:  # ocl-icd accepts a library name/path here
            found.append((Path(user).name + ".icd", user + "\n"))
    sources.append(system_vendors_dir(environ))
    for d in sources:
        try:
            entries = sorted(d.iterdir())
        except OSError:
            continue
        for f in entries:
            if f.suffix != ".icd" or f.name.startswith("."):
                continue
            try:
                found.append((f.name, f.read_text()))
            except OSError:
                continue
    return found


def merged_vendors_dir(environ=None, library=None):
    """A directory for OCL_ICD_VENDORS with pyplat.icd *and* the platforms already installed.

    Holds pyplat.icd and a copy of every .icd file of /etc/OpenCL/vendors (or
    OPENCL_VENDOR_PATH) and of the OCL_ICD_VENDORS the environment had. Other .icd files naming
    a PyPlat library are left out: two PyPlat libraries cannot share one process.
    Rewritten on every call (the installed platforms may change)."""
    environ = os.environ if environ is None else environ
    library = Path(library or shim_path())
    d = cache_dir() / "vendors" / f"{_tag(library)}-merged"
    d.mkdir(parents=True, exist_ok=True)
    wanted = {ICD_NAME: icd_text(library)}
    seen_targets = {str(library)}
    for name, text in _existing_icds(environ):
        target = _icd_target(text)
        if not target or _is_pyplat(target) or name == ICD_NAME:
            continue
        key = os.path.realpath(target) if os.path.isabs(target) else target
        if key in seen_targets:
            continue
        seen_targets.add(key)
        stem, n = name[:-4], 1
        while name in wanted:
            n += 1
            name = f"{stem}-{n}.icd"
        wanted[name] = text if text.endswith("\n") else text + "\n"
    for name, text in wanted.items():
        _write_atomic(d / name, text)
    for f in d.iterdir():
        if f.suffix == ".icd" and f.name not in wanted:
            try:
                f.unlink()
            except OSError:
                pass
    return d


# --- Using it -----------------------------------------------------------------------------------

def environment(environ=None, library=None):
    """A copy of `environ` (default os.environ) in which loaders see PyPlat and the installed
    platforms."""
    env = dict(os.environ if environ is None else environ)
    env["OCL_ICD_VENDORS"] = str(merged_vendors_dir(env, library))
    return env


def enable(library=None):
    """Make PyPlat visible to ICD loaders initialised later in this process and its children.

    Call before the first OpenCL call of the process (for pyopencl: before the first
    ``get_platforms()`` / ``create_some_context()``); loaders read the vendors directory once.
    Returns the directory OCL_ICD_VENDORS now names.
    """
    current = os.environ.get("OCL_ICD_VENDORS")
    library = Path(library or shim_path())
    if current and Path(current) == cache_dir() / "vendors" / f"{_tag(library)}-merged":
        return Path(current)
    d = merged_vendors_dir(os.environ, library)
    os.environ["OCL_ICD_VENDORS"] = str(d)
    return d


def install(vendors=SYSTEM_VENDORS, library=None):
    """Write pyplat.icd into the system vendors directory (needs root for /etc)."""
    vendors = Path(vendors)
    vendors.mkdir(parents=True, exist_ok=True)
    path = vendors / ICD_NAME
    _write_atomic(path, icd_text(library))
    return path


def uninstall(vendors=SYSTEM_VENDORS):
    path = Path(vendors) / ICD_NAME
    try:
        path.unlink()
    except FileNotFoundError:
        return None
    return path


def describe():
    """Lines for `pyplat icd --info`."""
    lines = [f"library: {shim_path()}", f"python: {sys.executable} ({sys.version.split()[0]})",
             f"system vendors dir: {system_vendors_dir()}"]
    installed = system_vendors_dir() / ICD_NAME
    lines.append(f"installed system-wide: {'yes: ' + str(installed) if installed.exists() else 'no'}")
    lines.append(f"OCL_ICD_VENDORS: {os.environ.get('OCL_ICD_VENDORS', '(unset)')}")
    return lines
