# Part of pyplat/runtime/_sched.pyx (included there, one compilation unit).
# ---------------------------------------------------------------------------------------------
# Where kernel code came from: the line tables of programs built with -g (the compiler reads
# them from the object's DWARF, pyplat/compiler/line_table.py), registered here by the layer
# above for as long as the code is loaded, so that a fault report (faults.pxi) can name the
# source line of the faulting instruction. A table is a range of code addresses and its rows
# (offset from the range's start, line, column, file), sorted by offset; a row holds from its
# offset to the next row's; line 0 is code of no one line (LLVM merged instructions of several
# lines, or made them), file PP_LINES_END the end of a sequence (nothing holds after it).
# Registration and lookup take one mutex: neither is on a hot path.
# ---------------------------------------------------------------------------------------------
from libc.stdint cimport uintptr_t

cdef extern from *:
    """
    #include <pthread.h>
    #include <stdint.h>
    #include <stdio.h>
    #include <stdlib.h>
    #include <string.h>

    typedef struct { uint32_t offset, line, column, file; } pp_line_row_t;
    #define PP_LINES_END 0xFFFFFFFFu
    #define PP_LINES_NEAR 256           /* bytes: how far back "near" may look */
    typedef struct pp_code_lines {
        struct pp_code_lines *next;
        long token;
        uintptr_t start;
        size_t size;
        size_t n_rows;
        pp_line_row_t *rows;
        size_t n_files;
        char **files;               /* into `names` */
        char *names;
    } pp_code_lines_t;

    static pthread_mutex_t pp_code_lines_lock = PTHREAD_MUTEX_INITIALIZER;
    static pp_code_lines_t *pp_code_lines_list = NULL;
    static long pp_code_lines_next = 1;

    /* In a forked child: the lock anew (a parent's thread may have held it); the tables stay,
       the code they describe is the child's too. */
    static void pp_code_lines_fork_child(void) {
        pthread_mutex_init(&pp_code_lines_lock, NULL);
    }

    /* rows: n_rows packed rows; names: n_names bytes of NUL-terminated file names. 0: no memory. */
    static long pp_code_lines_add(uintptr_t start, size_t size, const void *rows, size_t n_rows,
                                  const char *names, size_t n_names) {
        pp_code_lines_t *t = (pp_code_lines_t *)calloc(1, sizeof *t);
        size_t i, k = 0;
        if (t == NULL)
            return 0;
        t->rows = (pp_line_row_t *)malloc(n_rows * sizeof(pp_line_row_t) + 1);
        t->names = (char *)malloc(n_names + 1);
        if (t->rows == NULL || t->names == NULL)
            goto fail;
        memcpy(t->rows, rows, n_rows * sizeof(pp_line_row_t));
        memcpy(t->names, names, n_names);
        t->names[n_names] = 0;
        for (i = 0; i < n_names; i++)
            t->n_files += names[i] == 0;
        t->files = (char **)calloc(t->n_files + 1, sizeof(char *));
        if (t->files == NULL)
            goto fail;
        for (i = 0; i < t->n_files; i++) {
            t->files[i] = t->names + k;
            k += strlen(t->names + k) + 1;
        }
        t->start = start;
        t->size = size;
        t->n_rows = n_rows;
        pthread_mutex_lock(&pp_code_lines_lock);
        t->token = pp_code_lines_next++;
        t->next = pp_code_lines_list;
        pp_code_lines_list = t;
        pthread_mutex_unlock(&pp_code_lines_lock);
        return t->token;
    fail:
        free(t->rows);
        free(t->names);
        free(t);
        return 0;
    }

    static void pp_code_lines_remove(long token) {
        pp_code_lines_t **p, *t = NULL;
        pthread_mutex_lock(&pp_code_lines_lock);
        for (p = &pp_code_lines_list; *p != NULL; p = &(*p)->next)
            if ((*p)->token == token) {
                t = *p;
                *p = t->next;
                break;
            }
        pthread_mutex_unlock(&pp_code_lines_lock);
        if (t != NULL) {
            free(t->files);
            free(t->names);
            free(t->rows);
            free(t);
        }
    }

    /* "file:line:column" of the code at pc into out: 1, or 3 where the code there is of no one
       line but a line's code comes just before it in the same sequence (within PP_LINES_NEAR
       bytes; a load LLVM merged from two lines: the nearest line before it); code of a table
       but no line: 2; no table holds pc: 0. */
    static int pp_code_line(const void *pc, char *out, size_t n) {
        uintptr_t a = (uintptr_t)pc;
        pp_code_lines_t *t;
        int found = 0;
        pthread_mutex_lock(&pp_code_lines_lock);
        for (t = pp_code_lines_list; t != NULL; t = t->next) {
            size_t lo = 0, hi, off;
            if (a < t->start || a - t->start >= t->size)
                continue;
            off = a - t->start;
            hi = t->n_rows;
            while (lo < hi) {              /* the last row at or before off */
                size_t mid = (lo + hi) / 2;
                if (t->rows[mid].offset <= off)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            found = 2;
            if (lo > 0 && t->rows[lo - 1].file != PP_LINES_END) {
                const pp_line_row_t *r = &t->rows[lo - 1];
                found = 1;
                while (r->line == 0 && r > t->rows && r[-1].file != PP_LINES_END
                       && off - r[-1].offset <= PP_LINES_NEAR) {
                    r--;
                    found = 3;
                }
                if (r->line == 0)
                    found = 2;
                else
                    snprintf(out, n, "%s:%u:%u", r->file < t->n_files ? t->files[r->file] : "?",
                             r->line, r->column);
            }
            break;
        }
        pthread_mutex_unlock(&pp_code_lines_lock);
        return found;
    }
    """
    long pp_code_lines_add(uintptr_t start, size_t size, const void *rows, size_t n_rows,
                           const char *names, size_t n_names) nogil
    void pp_code_lines_remove(long token) nogil
    void pp_code_lines_fork_child() nogil
    int pp_code_line(const void *pc, char *out, size_t n) nogil


cdef class CodeLines:
    """A program's line table registered for fault reports while this object lives (the layer
    above keeps it with the program's code). start, size: the code's address range; rows:
    packed little-endian uint32 (offset, line, column, file index) sorted by offset; files: the
    file names, NUL-terminated, in index order."""
    cdef long token

    def __cinit__(self, size_t start, size_t size, bytes rows, bytes files):
        if len(rows) % 16:
            raise ValueError("line rows are 16 bytes each")
        self.token = pp_code_lines_add(start, size, <const char *>rows, len(rows) // 16,
                                       <const char *>files, len(files))
        if self.token == 0:
            raise MemoryError()

    def __dealloc__(self):
        if self.token:
            pp_code_lines_remove(self.token)


def code_line(size_t pc):
    """("at" or "near", "file:line:column") of the code at address pc by the registered tables
    (as a fault report names it), or None."""
    cdef char buf[512]
    cdef int found = pp_code_line(<const void *>pc, buf, sizeof(buf))
    if found not in (1, 3):
        return None
    return ("at" if found == 1 else "near"), buf.decode("utf-8", "replace")
