/* PyPlat ICD shim: loads the Python side on the first OpenCL call and answers the ICD loader's
 * own questions (clIcdGetPlatformIDsKHR, clGetExtensionFunctionAddress) in C.
 *
 * Python is never linked: every Py* function is found with dlsym, either in the process
 * (a Python program such as one using pyopencl: reuse its interpreter) or in the libpython
 * recorded at build time, dlopen'ed RTLD_GLOBAL (a C program: embed an interpreter).
 * Whatever fails, the host process must not crash: loading failures print one message to
 * stderr and leave PyPlat with no platforms, so loaders skip it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "shim.h"
#include "shim_config.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- Python, through dlsym -------------------------------------------------------------- */

typedef int gil_state_t; /* PyGILState_STATE is a C enum */

static struct {
    int (*Py_IsInitialized)(void);
    gil_state_t (*PyGILState_Ensure)(void);
    void (*PyGILState_Release)(gil_state_t);
    int (*PyRun_SimpleString)(const char *);
    void (*Py_InitializeEx)(int);
    void *(*PyEval_SaveThread)(void);
    const char *(*Py_GetVersion)(void);
    void (*PyErr_Fetch)(void **, void **, void **);
    void (*PyErr_Restore)(void *, void *, void *);
    int (*Py_IsFinalizing)(void);      /* optional: Py_IsFinalizing (3.13+) or _Py_IsFinalizing */
    int (*PyGILState_Check)(void);     /* optional, these four: fork() from C (below) */
    void (*PyOS_BeforeFork)(void);
    void (*PyOS_AfterFork_Parent)(void);
    void (*PyOS_AfterFork_Child)(void);
} py;

int pyplat_load_done;            /* atomic: loading finished (either way) */
static int load_ok;              /* the Python side is attached */
static int embedded;             /* we started the interpreter */

static int debug_enabled(void) {
    const char *d = getenv("PYPLAT_ICD_DEBUG");
    return d && *d && strcmp(d, "0") != 0;
}

static void debug(const char *fmt, ...) {
    if (!debug_enabled())
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("pyplat-icd: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static void fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("pyplat: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs("; the PyPlat platform is disabled in this process\n", stderr);
    va_end(ap);
}

/* ---- "not implemented", once per name ---------------------------------------------------- */

static pthread_mutex_t missing_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *missing_seen[256];
static int n_missing_seen;

void pyplat_report_missing(const char *name) {
    pthread_mutex_lock(&missing_lock);
    for (int i = 0; i < n_missing_seen; i++) {
        if (missing_seen[i] == name || strcmp(missing_seen[i], name) == 0) {
            pthread_mutex_unlock(&missing_lock);
            return;
        }
    }
    if (n_missing_seen < (int)(sizeof missing_seen / sizeof *missing_seen))
        missing_seen[n_missing_seen++] = name;
    pthread_mutex_unlock(&missing_lock);
    fprintf(stderr, "pyplat: %s is not implemented\n", name);
}

/* ---- Where we are ------------------------------------------------------------------------ */

/* The site-packages directory this library was installed into:
 * <site>/pyplat/_icd/libpyplat-icd.so -> <site>. Empty if the layout doesn't match. */
static void own_site_dir(char *out, size_t size) {
    Dl_info info;
    char path[PATH_MAX];
    out[0] = 0;
    if (!dladdr((void *)&pyplat_dispatch, &info) || !info.dli_fname)
        return;
    if (!realpath(info.dli_fname, path))
        snprintf(path, sizeof path, "%s", info.dli_fname);
    debug("library: %s", path);
    for (int up = 0; up < 3; up++) {
        char *slash = strrchr(path, '/');
        if (!slash)
            return;
        *slash = 0;
    }
    char probe[PATH_MAX + 32];
    struct stat st;
    snprintf(probe, sizeof probe, "%s/pyplat/__init__.py", path);
    if (stat(probe, &st) == 0)
        snprintf(out, size, "%s", path);
}

/* ---- Finding the interpreter ------------------------------------------------------------- */

static int resolve(void *lib) {
#define SYM(name)                                           \
    do {                                                    \
        *(void **)&py.name = dlsym(lib, #name);             \
        if (!py.name) {                                     \
            fail("%s not found in libpython", #name);       \
            return -1;                                      \
        }                                                   \
    } while (0)
    SYM(Py_IsInitialized);
    SYM(PyGILState_Ensure);
    SYM(PyGILState_Release);
    SYM(PyRun_SimpleString);
    SYM(Py_InitializeEx);
    SYM(PyEval_SaveThread);
    SYM(Py_GetVersion);
    SYM(PyErr_Fetch);
    SYM(PyErr_Restore);
#undef SYM
    *(void **)&py.Py_IsFinalizing = dlsym(lib, "Py_IsFinalizing");
    if (!py.Py_IsFinalizing)
        *(void **)&py.Py_IsFinalizing = dlsym(lib, "_Py_IsFinalizing");
    *(void **)&py.PyGILState_Check = dlsym(lib, "PyGILState_Check");
    *(void **)&py.PyOS_BeforeFork = dlsym(lib, "PyOS_BeforeFork");
    *(void **)&py.PyOS_AfterFork_Parent = dlsym(lib, "PyOS_AfterFork_Parent");
    *(void **)&py.PyOS_AfterFork_Child = dlsym(lib, "PyOS_AfterFork_Child");
    return 0;
}

static void *open_libpython(void) {
    char candidates[4][PATH_MAX];
    int n = 0;
    const char *env = getenv("PYPLAT_LIBPYTHON");
    if (env && *env)
        snprintf(candidates[n++], PATH_MAX, "%s", env);
    if (*PYPLAT_PY_INSTSONAME) {
        snprintf(candidates[n++], PATH_MAX, "%s/%s", PYPLAT_PY_LIBDIR, PYPLAT_PY_INSTSONAME);
        snprintf(candidates[n++], PATH_MAX, "%s", PYPLAT_PY_INSTSONAME);
    }
    if (*PYPLAT_PY_LDLIBRARY && strstr(PYPLAT_PY_LDLIBRARY, ".so"))
        snprintf(candidates[n++], PATH_MAX, "%s/%s", PYPLAT_PY_LIBDIR, PYPLAT_PY_LDLIBRARY);
    const char *last_error = "no shared libpython was recorded at build time";
    for (int i = 0; i < n; i++) {
        void *lib = dlopen(candidates[i], RTLD_NOW | RTLD_GLOBAL);
        debug("dlopen %s: %s", candidates[i], lib ? "ok" : dlerror());
        if (lib)
            return lib;
        last_error = candidates[i];
    }
    fail("cannot load libpython %s (tried %s%s); PyPlat needs a Python built with --enable-shared "
         "(set PYPLAT_LIBPYTHON to the library's path to override)",
         PYPLAT_PY_VERSION, last_error, n > 1 ? " and others" : "");
    return NULL;
}

static int version_matches(void) {
    const char *v = py.Py_GetVersion();
    size_t n = strlen(PYPLAT_PY_VERSION);
    if (v && strncmp(v, PYPLAT_PY_VERSION, n) == 0 && !(v[n] >= '0' && v[n] <= '9'))
        return 1;
    char running[32];
    snprintf(running, sizeof running, "%s", v ? v : "?");
    running[strcspn(running, " ")] = 0;
    fail("this process runs Python %s but PyPlat was built for Python %s "
         "(install PyPlat into the Python environment that runs this program)",
         running, PYPLAT_PY_VERSION);
    return 0;
}

/* ---- The bootstrap ----------------------------------------------------------------------- */

static void hex(char *out, const char *s) {
    static const char digits[] = "0123456789abcdef";
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        *out++ = digits[c >> 4];
        *out++ = digits[c & 15];
    }
    *out = 0;
}

/* Runs in __main__; binds no name there once done. Paths travel as hex so no quoting issue. */
static const char bootstrap_fmt[] =
    "def __pyplat_icd_boot():\n"
    "    import os, sys\n"
    "    d = lambda h: os.fsdecode(bytes.fromhex(h))\n"
    "    site_dir, embedded = d('%s'), %d\n"
    "    fallbacks = [d('%s'), d('%s')]\n"
    "    if embedded:\n"
    "        import site\n"
    "        sys.argv = [d('%s')]\n"
    "        for p in [site_dir] + fallbacks:\n"
    "            if not p or not os.path.isdir(p) or p in sys.path:\n"
    "                continue\n"
    "            site.addsitedir(p)\n"
    "            sys.path.remove(p)\n"
    "            at = [i for i, e in enumerate(sys.path) if e.endswith('-packages')]\n"
    "            sys.path.insert(at[0] if at else len(sys.path), p)\n"
    "        if site_dir:\n"
    "            prefix = os.path.dirname(os.path.dirname(os.path.dirname(site_dir)))\n"
    "            exe = os.path.join(prefix, 'bin', 'python%s')\n"
    "            if os.path.exists(exe):\n"
    "                sys.executable = exe\n"
    "        try:\n"
    "            sys.stdout.reconfigure(line_buffering=True)\n"
    "        except Exception:\n"
    "            pass\n"
    "    elif 'pyplat' not in sys.modules and site_dir:\n"
    "        # Import the pyplat next to this library, not another one that sys.path may hold.\n"
    "        had = site_dir in sys.path\n"
    "        sys.path.insert(0, site_dir)\n"
    "        try:\n"
    "            import pyplat\n"
    "        finally:\n"
    "            sys.path.remove(site_dir)\n"
    "            if not had:\n"
    "                sys.path.append(site_dir)\n"
    "    import pyplat, pyplat.api.bridge\n"
    "    here = os.path.dirname(os.path.dirname(os.path.abspath(pyplat.__file__)))\n"
    "    if site_dir and os.path.realpath(here) != os.path.realpath(site_dir):\n"
    "        sys.stderr.write('pyplat: warning: the ICD library is from %%s but the pyplat package '\n"
    "                         'in use is from %%s\\n' %% (site_dir, here))\n"
    "    try:\n"
    "        pyplat.api.bridge.attach(%#llx, %d, %#llx)\n"
    "    except SystemExit as e:\n"
    "        raise RuntimeError('SystemExit while loading PyPlat') from e\n"
    "try:\n"
    "    __pyplat_icd_boot()\n"
    "finally:\n"
    "    del __pyplat_icd_boot\n";

static int run_bootstrap(const char *site_dir) {
    extern char *program_invocation_name;
    const char *argv0 = program_invocation_name ? program_invocation_name : "pyplat-icd";
    size_t size = sizeof bootstrap_fmt + 2 * (strlen(site_dir) + strlen(PYPLAT_PY_PURELIB) +
                                             strlen(PYPLAT_PY_PLATLIB) + strlen(argv0)) + 256;
    char *code = malloc(size);
    char *h_site = malloc(2 * strlen(site_dir) + 1);
    char *h_pure = malloc(2 * strlen(PYPLAT_PY_PURELIB) + 1);
    char *h_plat = malloc(2 * strlen(PYPLAT_PY_PLATLIB) + 1);
    char *h_argv0 = malloc(2 * strlen(argv0) + 1);
    int rc = -1;
    if (code && h_site && h_pure && h_plat && h_argv0) {
        hex(h_site, site_dir);
        hex(h_pure, PYPLAT_PY_PURELIB);
        hex(h_plat, PYPLAT_PY_PLATLIB);
        hex(h_argv0, argv0);
        snprintf(code, size, bootstrap_fmt, h_site, embedded, h_pure, h_plat, h_argv0,
                 PYPLAT_PY_VERSION, (unsigned long long)(uintptr_t)pyplat_entry_table,
                 pyplat_n_entries, (unsigned long long)(uintptr_t)&pyplat_dispatch);
        rc = py.PyRun_SimpleString(code);
    }
    free(code);
    free(h_site);
    free(h_pure);
    free(h_plat);
    free(h_argv0);
    return rc;
}

/* Start an interpreter for a C program. PYTHONHOME points it at the stdlib of the Python we
 * were built for (else it would search from the host program's path); the variable is
 * restored afterwards so that the program's children don't inherit it. */
static void start_interpreter(void) {
    const char *home = getenv("PYTHONHOME");
    int set_home = !(home && *home) && *PYPLAT_PY_HOME;
    if (set_home)
        setenv("PYTHONHOME", PYPLAT_PY_HOME, 1);
    py.Py_InitializeEx(0); /* 0: leave the host's signal handlers alone */
    if (set_home)
        unsetenv("PYTHONHOME");
}

static int do_load(void) {
    char site_dir[PATH_MAX];
    own_site_dir(site_dir, sizeof site_dir);
    debug("site-packages: %s", *site_dir ? site_dir : "(not found, using build-time paths)");

    void *lib = RTLD_DEFAULT;
    if (!dlsym(RTLD_DEFAULT, "Py_IsInitialized")) {
        lib = open_libpython();
        if (!lib)
            return -1;
    }
    if (resolve(lib) != 0 || !version_matches())
        return -1;

    gil_state_t gil = 0;
    if (py.Py_IsInitialized()) {
        debug("reusing the process's Python %s", py.Py_GetVersion());
        gil = py.PyGILState_Ensure();
    } else {
        debug("starting Python %s", py.Py_GetVersion());
        embedded = 1;
        start_interpreter();
        if (!py.Py_IsInitialized()) {
            fail("Python failed to initialise");
            return -1;
        }
    }
    int rc = run_bootstrap(site_dir);
    if (rc != 0)
        fail("the Python side failed to load (traceback above)");
    if (embedded)
        py.PyEval_SaveThread(); /* let runtime threads and other host threads take the GIL */
    else
        py.PyGILState_Release(gil);
    return rc;
}

/* ---- fork() from C ------------------------------------------------------------------------
 * A C program (or a thread of a Python one that does not hold the GIL) calling fork() directly
 * skips what os.fork does around it, and the child may inherit a GIL held by a thread that no
 * longer exists (the runtime's reaper, a worker running a Python action): its first OpenCL call
 * would wait for the GIL forever. So around such a fork the shim does what os.fork does: take
 * the GIL, PyOS_BeforeFork (Python's "before" hooks: the JIT waits for other threads' LLVM work),
 * then PyOS_AfterFork_Parent / _Child (the child's interpreter forgets the other threads, and
 * the "after_in_child" hooks give it a working PyPlat: docs/runtime.md, "fork"). A thread that
 * holds the GIL is inside os.fork, or in a child about to exec (subprocess): nothing to do.
 * Registered after the Python side loaded, so these run after the runtime's own handlers in
 * the child (pthread_atfork: child handlers in registration order, prepare in reverse). The GIL
 * serialises forks that go through here, so one saved state is enough. */
static gil_state_t fork_gil;
static int fork_took_gil;

static void fork_prepare(void) {
    if (!py.PyGILState_Check || !py.PyOS_BeforeFork || !py.Py_IsInitialized() ||
        py.PyGILState_Check())
        return;
    gil_state_t gil = py.PyGILState_Ensure();
    fork_gil = gil;
    fork_took_gil = 1;
    py.PyOS_BeforeFork();
}

static void fork_parent(void) {
    if (!fork_took_gil)
        return;
    fork_took_gil = 0;
    py.PyOS_AfterFork_Parent();
    py.PyGILState_Release(fork_gil);
}

static void fork_child(void) {
    if (!fork_took_gil)
        return;
    fork_took_gil = 0;
    py.PyOS_AfterFork_Child();
    py.PyGILState_Release(fork_gil);
}

static void load(void) {
    pyplat_entry_table_init();
    const char *off = getenv("PYPLAT_ICD_DISABLE");
    if (off && *off && strcmp(off, "0") != 0) {
        debug("disabled by PYPLAT_ICD_DISABLE");
        load_ok = 0;
    } else {
        load_ok = do_load() == 0;
    }
    if (!load_ok)
        pyplat_entry_table_init(); /* drop anything a half-done attach wrote */
    else if (py.PyOS_AfterFork_Child && py.PyOS_AfterFork_Parent)
        pthread_atfork(fork_prepare, fork_parent, fork_child);
    debug("loaded: %s", load_ok ? "yes" : "no");
    __atomic_store_n(&pyplat_load_done, 1, __ATOMIC_RELEASE);
}

/* A thread that arrives while another one loads waits for it with the GIL released: the loader
 * runs Python, and the GIL is not held for the whole load but taken back and forth, so a waiter
 * holding it (pyopencl calls some entry points without releasing it) would deadlock. */
static void *release_gil_if_held(void) {
    int (*is_init)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "Py_IsInitialized");
    int (*check)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "PyGILState_Check");
    void *(*save)(void) = (void *(*)(void))dlsym(RTLD_DEFAULT, "PyEval_SaveThread");
    if (is_init && check && save && is_init() && check())
        return save();
    return NULL;
}

static void restore_gil(void *tstate) {
    if (!tstate)
        return;
    void (*restore)(void *) = (void (*)(void *))dlsym(RTLD_DEFAULT, "PyEval_RestoreThread");
    if (restore)
        restore(tstate);
}

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t load_cond = PTHREAD_COND_INITIALIZER;
static int load_state; /* 0: not started, 1: loading, 2: done; under load_lock */
static pthread_t loader_thread;

void pyplat_ensure_loaded_slow(void) {
    pthread_mutex_lock(&load_lock);
    if (load_state == 0) {
        load_state = 1;
        loader_thread = pthread_self();
        pthread_mutex_unlock(&load_lock);
        load();
        pthread_mutex_lock(&load_lock);
        load_state = 2;
        pthread_cond_broadcast(&load_cond);
        pthread_mutex_unlock(&load_lock);
        return;
    }
    if (load_state == 2 || pthread_equal(loader_thread, pthread_self())) {
        /* done, or a call made by the loading itself: it gets the fallbacks */
        pthread_mutex_unlock(&load_lock);
        return;
    }
    pthread_mutex_unlock(&load_lock);
    void *tstate = release_gil_if_held();
    pthread_mutex_lock(&load_lock);
    while (load_state != 2)
        pthread_cond_wait(&load_cond, &load_lock);
    pthread_mutex_unlock(&load_lock);
    restore_gil(tstate);
}

/* ---- What the loader asks in C ----------------------------------------------------------- */

cl_int CL_API_CALL pyplat_clIcdGetPlatformIDsKHR(cl_uint num_entries, cl_platform_id *platforms,
                                                 cl_uint *num_platforms) {
    PYPLAT_ENSURE_LOADED();
    if (!load_ok) {
        if (num_platforms)
            *num_platforms = 0;
        return CL_PLATFORM_NOT_FOUND_KHR;
    }
    cl_int rc = ((cl_api_clGetPlatformIDs)pyplat_entry_table[0])(num_entries, platforms, num_platforms);
    if (rc != CL_SUCCESS && num_platforms)
        *num_platforms = 0;
    return rc;
}
PYPLAT_EXPORT_ALIAS(clIcdGetPlatformIDsKHR)

void *CL_API_CALL pyplat_clGetExtensionFunctionAddress(const char *function_name) {
    if (!function_name)
        return NULL;
    for (const struct pyplat_named_entry *e = pyplat_extension_entries; e->name; e++)
        if (strcmp(e->name, function_name) == 0)
            return e->address;
    return NULL;
}
PYPLAT_EXPORT_ALIAS(clGetExtensionFunctionAddress)

void *CL_API_CALL pyplat_clGetExtensionFunctionAddressForPlatform(cl_platform_id platform,
                                                                  const char *function_name) {
    /* Only our platforms reach us through the loader; a direct caller may pass anything. */
    if (platform && !pyplat_handle_is(platform, PYPLAT_KIND_PLATFORM))
        return NULL;
    return pyplat_clGetExtensionFunctionAddress(function_name);
}
PYPLAT_EXPORT_ALIAS(clGetExtensionFunctionAddressForPlatform)

/* ---- Calls into Python keep the caller's pending exception -------------------------------- */

int pyplat_py_enter(struct pyplat_py_call *call) {
    call->active = load_ok;
    if (!call->active)
        return 1;
    /* While the interpreter shuts down (a Python host's objects released by its final garbage
     * collection), PyPlat's own modules may already be torn down: no call goes into Python then.
     * Handles stay readable (their memory is never returned at shutdown), and the process is
     * ending, so there is nothing left to release. */
    if (py.Py_IsFinalizing && py.Py_IsFinalizing()) {
        call->active = 0;
        return 0;
    }
    call->gil = py.PyGILState_Ensure();
    py.PyErr_Fetch(&call->type, &call->value, &call->traceback);
    return 1;
}

void pyplat_py_leave(struct pyplat_py_call *call) {
    if (!call->active)
        return;
    if (call->type)
        py.PyErr_Restore(call->type, call->value, call->traceback);
    py.PyGILState_Release(call->gil);
}
