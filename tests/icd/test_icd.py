"""The ICD shim and discovery, through the real loaders, against the INSTALLED package.

C processes (clinfo, a small C program compiled here) exercise the embedded interpreter; Python
processes (pyopencl, ctypes) exercise reusing the host's interpreter.
"""
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

POCL_NAME = "Portable Computing Language"


def _system_icds():
    d = Path(os.environ.get("OPENCL_VENDOR_PATH") or "/etc/OpenCL/vendors")
    try:
        return {f.name: f.read_text().strip() for f in d.glob("*.icd")}
    except OSError:
        return {}


def _have_pocl():
    return any("pocl" in target for target in _system_icds().values())


def _pyplat(pyplat_command, *args, **kwargs):
    kwargs.setdefault("capture_output", True)
    kwargs.setdefault("text", True)
    kwargs.setdefault("timeout", 300)
    return subprocess.run(pyplat_command + list(args), **kwargs)


# --- discovery ------------------------------------------------------------------------------------

def test_icd_dir_holds_pyplat_icd(pyplat_command, installed_shim, tmp_path):
    r = _pyplat(pyplat_command, "icd", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    d = Path(r.stdout.strip())
    assert d.is_dir()
    icd = d / "pyplat.icd"
    target = Path(icd.read_text().strip())
    assert target.is_absolute() and target.is_file()
    assert target == installed_shim
    assert target.name == "libpyplat-icd.so" and target.parent.name == "_icd"
    assert sorted(p.name for p in d.glob("*.icd")) == ["pyplat.icd"]


def test_icd_dir_honours_xdg_cache_home(pyplat_command, tmp_path):
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    r = _pyplat(pyplat_command, "icd", env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert Path(r.stdout.strip()).is_relative_to(tmp_path / "cache" / "pyplat" / "vendors")


def test_merged_dir_keeps_installed_platforms(pyplat_command, tmp_path):
    user = tmp_path / "user-vendors"
    user.mkdir()
    (user / "other.icd").write_text("/opt/other/libother.so\n")
    (user / "old-pyplat.icd").write_text("/somewhere/pyplat/_icd/libpyplat-icd.so\n")
    env = dict(os.environ, OCL_ICD_VENDORS=str(user), XDG_CACHE_HOME=str(tmp_path / "cache"))
    r = _pyplat(pyplat_command, "icd", "--merged", env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    d = Path(r.stdout.strip())
    merged = {f.name: f.read_text().strip() for f in d.glob("*.icd")}
    assert "pyplat.icd" in merged
    assert merged.get("other.icd") == "/opt/other/libother.so"
    # another PyPlat library must not be loaded next to ours
    assert not any(t.startswith("/somewhere") for t in merged.values())
    for target in _system_icds().values():
        assert target in merged.values()


def test_install_writes_vendors_file(pyplat_command, installed_shim, tmp_path):
    vendors = tmp_path / "vendors"
    r = _pyplat(pyplat_command, "icd", "--install", "--vendors-dir", str(vendors), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (vendors / "pyplat.icd").read_text().strip() == str(installed_shim)
    r = _pyplat(pyplat_command, "icd", "--uninstall", "--vendors-dir", str(vendors), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert not (vendors / "pyplat.icd").exists()


def test_run_passes_exit_status_and_environment(pyplat_command, tmp_path):
    r = _pyplat(pyplat_command, "run", "--", "sh", "-c", 'echo "$OCL_ICD_VENDORS"; exit 7',
                cwd=tmp_path)
    assert r.returncode == 7
    d = Path(r.stdout.strip())
    assert (d / "pyplat.icd").is_file()
    r = _pyplat(pyplat_command, "run", "--", "no-such-command-pyplat", cwd=tmp_path)
    assert r.returncode == 127


def test_conformance_is_a_subcommand(pyplat_command, tmp_path):
    r = _pyplat(pyplat_command, "--help", cwd=tmp_path)
    assert "conformance" in r.stdout


# --- the shim itself ------------------------------------------------------------------------------

def test_shim_exports_only_opencl_and_links_no_python(installed_shim):
    if not shutil.which("nm") or not shutil.which("readelf"):
        pytest.skip("binutils not installed")
    names = subprocess.run(["nm", "-D", "--defined-only", str(installed_shim)], capture_output=True,
                           text=True, check=True).stdout.split()
    exported = {n for n in names[2::3]}
    assert {"clIcdGetPlatformIDsKHR", "clGetExtensionFunctionAddress", "clGetPlatformInfo",
            "clGetExtensionFunctionAddressForPlatform", "clEnqueueNDRangeKernel"} <= exported
    assert all(n.startswith("cl") for n in exported), sorted(n for n in exported if not n.startswith("cl"))
    dyn = subprocess.run(["readelf", "-d", str(installed_shim)], capture_output=True, text=True,
                         check=True).stdout
    assert "libpython" not in dyn
    assert "libOpenCL" not in dyn


@pytest.mark.skipif(not shutil.which("clinfo"), reason="clinfo not installed")
def test_clinfo_lists_pyplat_and_installed_platforms(run_with_pyplat, pyplat_command):
    r = run_with_pyplat(pyplat_command + ["run", "--", "clinfo", "-l"])
    assert r.returncode == 0, r.stderr
    assert "PyPlat" in r.stdout, r.stdout + r.stderr
    if _have_pocl():
        assert POCL_NAME in r.stdout


@pytest.mark.skipif(not shutil.which("clinfo"), reason="clinfo not installed")
def test_clinfo_full_does_not_crash(run_with_pyplat):
    r = run_with_pyplat(["clinfo"])
    assert r.returncode == 0, r.stderr[-3000:]
    assert "PyPlat" in r.stdout


@pytest.mark.skipif(not shutil.which("clinfo"), reason="clinfo not installed")
def test_broken_python_side_is_skipped_cleanly(run_with_pyplat, tmp_path):
    # A `pyplat` package that fails to import shadows the real one: the loader must skip PyPlat,
    # keep the other platforms and the host must not crash.
    bad = tmp_path / "shadow"
    (bad / "pyplat").mkdir(parents=True)
    (bad / "pyplat" / "__init__.py").write_text("raise ImportError('deliberately broken')\n")
    r = run_with_pyplat(["clinfo", "-l"], env={"PYTHONPATH": str(bad)})
    assert r.returncode == 0, r.stderr
    assert "PyPlat" not in r.stdout
    assert "pyplat:" in r.stderr
    if _have_pocl():
        assert POCL_NAME in r.stdout


@pytest.mark.skipif(not shutil.which("clinfo"), reason="clinfo not installed")
def test_disabled_by_environment(run_with_pyplat):
    r = run_with_pyplat(["clinfo", "-l"], env={"PYPLAT_ICD_DISABLE": "1"})
    assert r.returncode == 0, r.stderr
    assert "PyPlat" not in r.stdout


def _pyopencl_available():
    try:
        import importlib.util
        return importlib.util.find_spec("pyopencl") is not None
    except Exception:
        return False


@pytest.mark.skipif(not _pyopencl_available(), reason="pyopencl not installed")
def test_pyopencl_enable(run_with_pyplat, tmp_path):
    code = ("import pyplat; pyplat.enable(); import pyopencl as cl; "
            "print([p.name for p in cl.get_platforms()])")
    env = {k: v for k, v in os.environ.items() if k != "OCL_ICD_VENDORS"}
    env.pop("PYTHONPATH", None)
    r = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    names = eval(r.stdout.strip().splitlines()[-1])
    assert "PyPlat" in names
    if _have_pocl():
        assert POCL_NAME in names


@pytest.mark.skipif(not _pyopencl_available(), reason="pyopencl not installed")
def test_pyopencl_under_pyplat_run_without_importing_pyplat(run_with_pyplat, pyplat_command):
    code = ("import sys, pyopencl as cl; names = [p.name for p in cl.get_platforms()]; "
            "print(names); d = cl.get_platforms()[names.index('PyPlat')].get_devices(); "
            "print(len(d))")
    r = run_with_pyplat(pyplat_command + ["run", "--", sys.executable, "-c", code])
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert "PyPlat" in eval(lines[0])
    assert int(lines[1]) >= 1


def test_concurrent_first_calls_in_python(installed_shim, run_with_pyplat):
    # Many threads race into the shim's one-time loading (the interpreter is the host's).
    code = f"""
import ctypes, threading
lib = ctypes.CDLL({str(installed_shim)!r})
results = []
def call():
    n = ctypes.c_uint32()
    results.append((lib.clGetPlatformIDs(0, None, ctypes.byref(n)), n.value))
ts = [threading.Thread(target=call) for _ in range(8)]
for t in ts: t.start()
for t in ts: t.join()
print(sorted(set(results)))
"""
    r = run_with_pyplat([sys.executable, "-c", code])
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[(0, 1)]", r.stdout + r.stderr


# --- handles through the loader, from C -----------------------------------------------------------

HANDLE_TEST_C = r"""
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct fake { const void *dispatch; uint32_t magic, kind; uint64_t serial; };

static cl_int info(cl_platform_id p) {
    char buf[256];
    return clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof buf, buf, NULL);
}

static void *direct_lib;
static void *thread_main(void *arg) {
    cl_int (*get)(cl_uint, cl_platform_id *, cl_uint *) =
        (cl_int (*)(cl_uint, cl_platform_id *, cl_uint *))dlsym(direct_lib, "clGetPlatformIDs");
    cl_uint n = 0;
    cl_int rc = get(0, NULL, &n);
    *(int *)arg = rc == CL_SUCCESS && n == 1;
    return NULL;
}

int main(int argc, char **argv) {
    if (argc > 2 && strcmp(argv[1], "threads") == 0) {
        /* The shim opened directly, its first calls racing from 8 threads (embedded case). */
        direct_lib = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
        if (!direct_lib) { printf("dlopen failed: %s\n", dlerror()); return 2; }
        pthread_t t[8]; int ok[8];
        for (int i = 0; i < 8; i++) pthread_create(&t[i], NULL, thread_main, &ok[i]);
        int all = 1;
        for (int i = 0; i < 8; i++) { pthread_join(t[i], NULL); all &= ok[i]; }
        printf("threads %s\n", all ? "ok" : "FAILED");
        return all ? 0 : 1;
    }
    cl_uint n = 0;
    cl_platform_id ps[16];
    if (clGetPlatformIDs(16, ps, &n) != CL_SUCCESS) { printf("no platforms\n"); return 2; }
    cl_platform_id pyplat = NULL;
    for (cl_uint i = 0; i < n && i < 16; i++) {
        char name[256] = "";
        clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
        if (strcmp(name, "PyPlat") == 0) pyplat = ps[i];
    }
    if (!pyplat) { printf("no PyPlat\n"); return 3; }
    printf("valid %d\n", info(pyplat));

    struct fake f = { *(const void **)pyplat, 0x12345678u, 1, 0 };    /* our dispatch, bad magic */
    printf("foreign %d\n", info((cl_platform_id)&f));
    struct fake dead = { *(const void **)pyplat, 0x44414544u, 1, 7 }; /* a "released" handle */
    printf("dead %d\n", info((cl_platform_id)&dead));

    cl_device_id dev;
    if (clGetDeviceIDs(pyplat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) == CL_SUCCESS)
        printf("device_as_platform %d\n", info((cl_platform_id)dev));

    /* Straight into the shim, no loader in between: NULL and junk pointers. */
    Dl_info dl;
    void *direct = NULL;
    if (dladdr(*(void **)((char *)*(void **)pyplat + sizeof(void *)), &dl) && dl.dli_fname)
        direct = dlopen(dl.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    if (direct) {
        cl_int (*gpi)(cl_platform_id, cl_platform_info, size_t, void *, size_t *) =
            (cl_int (*)(cl_platform_id, cl_platform_info, size_t, void *, size_t *))
            dlsym(direct, "clGetPlatformInfo");
        char buf[64];
        printf("direct_null %d\n", gpi(NULL, CL_PLATFORM_NAME, sizeof buf, buf, NULL));
        printf("direct_junk %d\n", gpi((cl_platform_id)(uintptr_t)0x10, CL_PLATFORM_NAME, sizeof buf, buf, NULL));
        struct fake alien = { (const void *)&f, 0, 0, 0 };
        printf("direct_alien %d\n", gpi((cl_platform_id)&alien, CL_PLATFORM_NAME, sizeof buf, buf, NULL));
    }
    printf("null_via_loader %d\n", info(NULL));

    void *icd = clGetExtensionFunctionAddressForPlatform(pyplat, "clIcdGetPlatformIDsKHR");
    void *none = clGetExtensionFunctionAddressForPlatform(pyplat, "clNoSuchFunctionPYPL");
    printf("ext_icd %d\n", icd != NULL);
    printf("ext_none %d\n", none == NULL);
    return 0;
}
"""


@pytest.fixture(scope="session")
def handle_test_program(tmp_path_factory):
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler")
    d = tmp_path_factory.mktemp("handles")
    src = d / "handles.c"
    src.write_text(HANDLE_TEST_C)
    exe = d / "handles"
    r = subprocess.run([cc, "-O1", "-o", str(exe), str(src), "-lOpenCL", "-ldl", "-lpthread"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip("cannot build a C program against -lOpenCL: " + r.stderr[-500:])
    return exe


def test_bad_handles_through_the_loader(handle_test_program, run_with_pyplat):
    r = run_with_pyplat([handle_test_program])
    assert r.returncode == 0, r.stdout + r.stderr
    out = dict(line.split() for line in r.stdout.strip().splitlines())
    CL_INVALID_PLATFORM = "-32"
    assert out["valid"] == "0"
    assert out["foreign"] == CL_INVALID_PLATFORM
    assert out["dead"] == CL_INVALID_PLATFORM
    assert out.get("device_as_platform", CL_INVALID_PLATFORM) == CL_INVALID_PLATFORM
    assert out["direct_junk"] == CL_INVALID_PLATFORM
    assert out["direct_alien"] == CL_INVALID_PLATFORM
    # NULL: the platform may pick itself (implementation-defined) but must not crash
    assert out["direct_null"] in ("0", CL_INVALID_PLATFORM)
    assert out["null_via_loader"] in ("0", CL_INVALID_PLATFORM)
    assert out["ext_icd"] == "1"
    assert out["ext_none"] == "1"


def test_concurrent_first_calls_in_c(handle_test_program, run_with_pyplat, installed_shim):
    r = run_with_pyplat([handle_test_program, "threads", installed_shim])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "threads ok" in r.stdout


# --- the example --------------------------------------------------------------------------------

def _vecadd():
    exe = Path(sysconfig.get_path("scripts")) / "pyplat-vecadd"
    if not exe.exists():
        exe = Path(sys.executable).parent / "pyplat-vecadd"
    if not exe.exists():
        pytest.skip("pyplat-vecadd is not installed")
    return exe


def test_vecadd_on_another_platform(run_with_pyplat):
    if not _have_pocl():
        pytest.skip("PoCL not installed")
    r = run_with_pyplat([_vecadd()], env={"PYPLAT_PLATFORM": "Portable"})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1048576 elements OK on Portable Computing Language" in r.stdout


def test_vecadd_on_pyplat(run_with_pyplat):
    r = run_with_pyplat([_vecadd()])
    if r.returncode != 0 and "clBuildProgram failed" in r.stderr:
        pytest.xfail("the compiler cannot build the vecadd kernel yet:\n" + r.stderr[-2000:])
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().endswith("vecadd: 1048576 elements OK on PyPlat")
