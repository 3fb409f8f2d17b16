# Part of pyplat/runtime/_sched.pyx (included there, one compilation unit).
# ---------------------------------------------------------------------------------------------
# Faults inside kernel code (docs/runtime.md, "Faults in kernels"): a hardware fault (SIGSEGV,
# SIGBUS, SIGFPE, SIGILL) while a thread runs kernel code ends that command with
# CL_OUT_OF_RESOURCES and one line on stderr; the thread goes on and the host survives.
#
# One process-wide handler. A thread running kernel code *arms* its guard (a sigjmp_buf on its
# stack, published in a fixed table of slots, one per thread); the handler looks for the
# faulting thread's armed guard and jumps back to it. Any other fault is not ours: it goes to
# the handler that was there before (Python's faulthandler, libclang's crash recovery, the host
# program's), or, if none, gets the default action as if we were not there.
# Ours must see kernel faults first: other handlers may disable themselves on a fault that is
# not theirs (libclang's crash recovery does, for good), so where others may have installed
# theirs over ours, ours is put in front again (keep_fault_guard_first), each time as a new
# trampoline that remembers what was on top then; a chain through ours twice cannot loop.
# The handler reads no thread-local storage (not async-signal-safe in a dlopen'ed module): it
# finds the thread's slot by pthread_self(). Each guarded thread gets an alternate signal stack,
# so that a stack overflow in a kernel is caught too.
# ---------------------------------------------------------------------------------------------

cdef extern from *:
    """
    #include <signal.h>
    #include <setjmp.h>
    #include <pthread.h>
    #include <stdio.h>
    #include <stdlib.h>
    #include <string.h>
    #include <ucontext.h>

    #define PP_GUARD_SLOTS 512
    #define PP_ALTSTACK_SIZE (64 * 1024)
    typedef void (*pp_guarded_fn)(void *);
    typedef struct {
        sigjmp_buf jb;
        volatile sig_atomic_t armed;
        volatile int sig;
        void *volatile addr;        /* the address the fault was about */
        void *volatile pc;          /* the faulting instruction (NULL where unknown) */
    } pp_guard_t;
    typedef struct {            /* one per thread that ran guarded code; padded: no false sharing */
        long used;              /* 0 free, 2 being claimed, 1 owned */
        pthread_t owner;
        pp_guard_t *guard;      /* the armed guard (NULL: none) */
        char pad[64 - sizeof(long) - sizeof(pthread_t) - sizeof(void *)];
    } pp_guard_slot_t;

    static pp_guard_slot_t pp_guard_slots[PP_GUARD_SLOTS] __attribute__((aligned(64)));
    static const int pp_fault_signals[4] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
    #define PP_FAULT_LEVELS 8
    static struct sigaction pp_fault_prev[PP_FAULT_LEVELS][4];   /* per trampoline, per signal */
    static int pp_fault_level[4];               /* trampolines installed so far, per signal */
    static int pp_fault_installed = 0;
    static __thread int pp_guard_slot = -1;
    static __thread void *pp_guard_altstack = NULL;
    static pthread_key_t pp_guard_key;
    static pthread_once_t pp_guard_once = PTHREAD_ONCE_INIT;

    /* Not in kernel code: to the handler that was on top when trampoline `level` was installed;
       called directly, so ours stays installed (libclang's crash recovery then recovers and
       returns to its caller; a handler that ends the process does so). If there was none: the
       default action (a fault recurs when this returns; a sent signal is sent again). */
    static void pp_fault_pass_on(int level, int k, int sig, siginfo_t *si, void *uc) {
        struct sigaction *p = &pp_fault_prev[level][k], dfl;
        if ((p->sa_flags & SA_SIGINFO) && p->sa_sigaction != NULL) {
            p->sa_sigaction(sig, si, uc);
            return;
        }
        if (!(p->sa_flags & SA_SIGINFO) && p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN) {
            p->sa_handler(sig);
            return;
        }
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        sigaction(sig, &dfl, NULL);
        if (si == NULL || si->si_code <= 0)
            raise(sig);
    }

    /* The faulting instruction's address from the signal's context. */
    static void *pp_fault_pc(void *uc) {
        if (uc == NULL)
            return NULL;
    #if defined(__x86_64__)
        return (void *)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
    #elif defined(__aarch64__)
        return (void *)((ucontext_t *)uc)->uc_mcontext.pc;
    #else
        return NULL;
    #endif
    }

    static void pp_fault_dispatch(int level, int sig, siginfo_t *si, void *uc) {
        pthread_t self = pthread_self();
        int i, k;
        for (i = 0; i < PP_GUARD_SLOTS; i++) {
            pp_guard_slot_t *s = &pp_guard_slots[i];
            pp_guard_t *g;
            if (__atomic_load_n(&s->used, __ATOMIC_ACQUIRE) != 1 || !pthread_equal(s->owner, self))
                continue;
            g = __atomic_load_n(&s->guard, __ATOMIC_ACQUIRE);
            if (g != NULL && g->armed) {
                g->armed = 0;
                g->sig = sig;
                g->addr = si != NULL ? si->si_addr : NULL;
                g->pc = pp_fault_pc(uc);
                siglongjmp(g->jb, 1);      /* SA_NODEFER: the signal is not left blocked */
            }
        }
        for (k = 0; k < 4 && pp_fault_signals[k] != sig; k++)
            ;
        if (k < 4)
            pp_fault_pass_on(level, k, sig, si, uc);
    }

    /* One trampoline per installation: each remembers what was on top when it was installed,
       so a chain that passes through ours twice never loops (docs/runtime.md). */
    #define PP_TRAMPOLINE(n) static void pp_fault_handler_##n(int sig, siginfo_t *si, void *uc) \
        { pp_fault_dispatch(n, sig, si, uc); }
    PP_TRAMPOLINE(0) PP_TRAMPOLINE(1) PP_TRAMPOLINE(2) PP_TRAMPOLINE(3)
    PP_TRAMPOLINE(4) PP_TRAMPOLINE(5) PP_TRAMPOLINE(6) PP_TRAMPOLINE(7)
    typedef void (*pp_sigaction_fn)(int, siginfo_t *, void *);
    static const pp_sigaction_fn pp_fault_trampolines[PP_FAULT_LEVELS] = {
        pp_fault_handler_0, pp_fault_handler_1, pp_fault_handler_2, pp_fault_handler_3,
        pp_fault_handler_4, pp_fault_handler_5, pp_fault_handler_6, pp_fault_handler_7};

    static int pp_fault_ours(const struct sigaction *a) {
        int n;
        if (!(a->sa_flags & SA_SIGINFO))
            return 0;
        for (n = 0; n < PP_FAULT_LEVELS; n++)
            if (a->sa_sigaction == pp_fault_trampolines[n])
                return 1;
        return 0;
    }

    static int pp_fault_handler_on_top(void) {
        struct sigaction cur;
        int k;
        for (k = 0; k < 4; k++)
            if (sigaction(pp_fault_signals[k], NULL, &cur) != 0 || !pp_fault_ours(&cur))
                return 0;
        return 1;
    }

    /* Ours first for every fault signal where another handler was installed over it (or none
       yet): a new trampoline on top. Returns how many signals changed. */
    static pthread_mutex_t pp_fault_lock = PTHREAD_MUTEX_INITIALIZER;
    static int pp_fault_install(void) {
        struct sigaction sa, cur;
        int k, changed = 0;
        pthread_mutex_lock(&pp_fault_lock);
        for (k = 0; k < 4; k++) {
            if (sigaction(pp_fault_signals[k], NULL, &cur) != 0 || pp_fault_ours(&cur)
                    || pp_fault_level[k] >= PP_FAULT_LEVELS)
                continue;
            memset(&sa, 0, sizeof sa);
            sa.sa_sigaction = pp_fault_trampolines[pp_fault_level[k]];
            sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
            sigemptyset(&sa.sa_mask);
            pp_fault_prev[pp_fault_level[k]][k] = cur;
            if (sigaction(pp_fault_signals[k], &sa, NULL) == 0) {
                pp_fault_level[k]++;
                changed++;
            }
        }
        pp_fault_installed = 1;
        pthread_mutex_unlock(&pp_fault_lock);
        return changed;
    }

    /* pp_fault_install where SIGSEGV's handler is not ours: one query (a syscall) when nothing
       changed, for the paths that must stay cheap (contexts made natively, api/_native.pyx). */
    static int pp_fault_install_if_moved(void) {
        struct sigaction cur;
        if (pp_fault_installed && sigaction(SIGSEGV, NULL, &cur) == 0 && pp_fault_ours(&cur))
            return 0;
        return pp_fault_install();
    }

    static void pp_guard_thread_exit(void *unused) {
        stack_t off;
        (void)unused;
        if (pp_guard_slot >= 0) {
            pp_guard_slots[pp_guard_slot].guard = NULL;
            __atomic_store_n(&pp_guard_slots[pp_guard_slot].used, 0, __ATOMIC_RELEASE);
            pp_guard_slot = -1;
        }
        if (pp_guard_altstack != NULL) {
            memset(&off, 0, sizeof off);
            off.ss_flags = SS_DISABLE;
            sigaltstack(&off, NULL);
            free(pp_guard_altstack);
            pp_guard_altstack = NULL;
        }
    }

    static void pp_guard_key_init(void) { pthread_key_create(&pp_guard_key, pp_guard_thread_exit); }

    /* This thread's slot (claimed on its first guarded run, freed when it exits), with an
       alternate signal stack if it had none. -1 if every slot is taken: then runs unguarded. */
    static int pp_guard_claim(void) {
        stack_t cur, ss;
        long expected;
        int i;
        pthread_once(&pp_guard_once, pp_guard_key_init);
        for (i = 0; i < PP_GUARD_SLOTS; i++) {
            expected = 0;
            if (__atomic_compare_exchange_n(&pp_guard_slots[i].used, &expected, 2, 0,
                                            __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
                pp_guard_slots[i].owner = pthread_self();
                pp_guard_slots[i].guard = NULL;
                __atomic_store_n(&pp_guard_slots[i].used, 1, __ATOMIC_RELEASE);
                pp_guard_slot = i;
                pthread_setspecific(pp_guard_key, (void *)1);
                break;
            }
        }
        if (pp_guard_slot >= 0 && sigaltstack(NULL, &cur) == 0 && (cur.ss_flags & SS_DISABLE)) {
            pp_guard_altstack = malloc(PP_ALTSTACK_SIZE);
            if (pp_guard_altstack != NULL) {
                memset(&ss, 0, sizeof ss);
                ss.ss_sp = pp_guard_altstack;
                ss.ss_size = PP_ALTSTACK_SIZE;
                if (sigaltstack(&ss, NULL) != 0) {
                    free(pp_guard_altstack);
                    pp_guard_altstack = NULL;
                }
            }
        }
        return pp_guard_slot;
    }

    /* fn(arg) with this thread's guard armed: 0, or 1 if it faulted (*sig, *addr, *pc: what,
       and where in the code). */
    static int pp_run_guarded(pp_guarded_fn fn, void *arg, int *sig, void **addr, void **pc) {
        pp_guard_t g;
        pp_guard_slot_t *s;
        pp_guard_t *outer;
        int slot = pp_guard_slot >= 0 ? pp_guard_slot : pp_guard_claim();
        if (slot < 0 || !pp_fault_installed) {
            fn(arg);
            return 0;
        }
        s = &pp_guard_slots[slot];
        outer = s->guard;
        g.armed = 0;
        if (sigsetjmp(g.jb, 0)) {
            __atomic_store_n(&s->guard, outer, __ATOMIC_RELEASE);
            *sig = g.sig;
            *addr = g.addr;
            *pc = g.pc;
            return 1;
        }
        __atomic_store_n(&s->guard, &g, __ATOMIC_RELEASE);
        g.armed = 1;
        fn(arg);
        g.armed = 0;
        __atomic_store_n(&s->guard, outer, __ATOMIC_RELEASE);
        return 0;
    }

    /* In a forked child: the parent's other threads are gone, and so are their slots. */
    static void pp_guard_fork_child(void) {
        memset(pp_guard_slots, 0, sizeof pp_guard_slots);
        pp_guard_slot = -1;
    }

    /* The fault's line: the source position of the faulting instruction ("at"; "near": the
       nearest line before code of no one line) where the program was built with a line table
       (-g; code_lines.pxi), else a hint how to get one. */
    static void pp_report_fault(const char *kernel, int sig, void *addr, void *pc,
                                const unsigned long long *group) {
        const char *what = sig == SIGSEGV ? "SIGSEGV, invalid memory access"
                         : sig == SIGBUS ? "SIGBUS, invalid memory access"
                         : sig == SIGFPE ? "SIGFPE, arithmetic fault"
                         : sig == SIGILL ? "SIGILL, illegal instruction or trap" : "signal";
        char where[560] = "", line[512];
        int known = pc != NULL ? pp_code_line(pc, line, sizeof line) : 0;
        if (known == 1 || known == 3)
            snprintf(where, sizeof where, " %s %s", known == 1 ? "at" : "near", line);
        fprintf(stderr, "pyplat: kernel '%s' faulted in work-group (%llu, %llu, %llu)%s: %s at %p; "
                "the command ends with CL_OUT_OF_RESOURCES%s\\n",
                kernel[0] ? kernel : "?", group[0], group[1], group[2], where, what, addr,
                known == 0 ? " (build the program with -g for the source line)" : "");
        fflush(stderr);
    }
    """
    ctypedef void (*pp_guarded_fn)(void *) noexcept nogil
    int pp_run_guarded(pp_guarded_fn fn, void *arg, int *sig, void **addr, void **pc) nogil
    int pp_fault_install() nogil
    int pp_fault_install_if_moved() nogil
    int pp_fault_handler_on_top() nogil
    void pp_guard_fork_child() nogil
    void pp_report_fault(const char *kernel, int sig, void *addr, void *pc,
                         const unsigned long long *group) nogil


pp_fault_install()


def fault_guard_installed():
    """Whether the kernel fault handler is the one installed for SIGSEGV (the first to see a
    fault)."""
    return bool(pp_fault_handler_on_top())


def keep_fault_guard_first():
    """Put the kernel fault handler in front again where other code installed signal handlers
    over it (libclang's crash recovery with its first index, another platform's LLVM, Python's
    faulthandler, the host program): called where such code may have run (contexts, builds).
    The others stay behind ours and still get every fault that is not in kernel code. Returns
    the number of signals whose handler changed."""
    return pp_fault_install()


cdef int fault_guard_first() noexcept nogil:
    """keep_fault_guard_first for native callers, cheap when nothing moved (one query)."""
    return pp_fault_install_if_moved()
