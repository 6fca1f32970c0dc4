/*
 * The process's unwinders, found and probed at run time (unwinder.c): which
 * ones exist (libgcc_s, LLVM libunwind, in global scope or loaded by glibc's
 * backtrace()) and how each takes registrations. The unwind sink
 * (sink_unwind.c) registers its tables with every one bound here.
 */
#ifndef JF_UNWINDER_H
#define JF_UNWINDER_H

typedef void (*frame_fn)(void *);
typedef void (*register_table_fn)(void *array, void *object);
typedef void (*register_object_fn)(const void *begin, void *object);
typedef void *(*deregister_info_fn)(const void *begin);

/* How regions reach an unwinder. */
typedef enum jf__unwinder_mode {
    MODE_PER_FDE,    /* LLVM libunwind: __register_frame takes one FDE */
    MODE_PER_REGION, /* a libgcc b-tree (GCC 13+), or unknown: one table per region */
    MODE_TABLES,     /* a libgcc list (GCC <= 12): shared tables of region images */
} jf__unwinder_mode;

typedef struct jf__unwinder {
    frame_fn register_frame;
    frame_fn deregister_frame;
    register_table_fn register_table;   /* __register_frame_info_table (MODE_TABLES) */
    register_object_fn register_info;   /* __register_frame_info (libgcc, if exported) */
    deregister_info_fn deregister_info; /* __deregister_frame_info (libgcc, if exported) */
    int per_fde;                        /* LLVM libunwind (__unw_add_dynamic_fde in the same library) */
    jf__unwinder_mode mode;
    const void *base; /* load address of the library that defines them */
    void *handle;     /* keeps that library loaded while tables point into it */
} jf__unwinder;

enum { MAX_UNWINDERS = 2 };

/* Find and probe the unwinders, once per process (kept across stop/start
 * and fork; under the registry lock). 0, or JF_ENOTSUP when there is none. */
int jf__unwinders_bind(void);

/* The bound unwinders, *n of them (0 before a successful bind). */
const jf__unwinder *jf__unwinders(int *n);

/* Whether some bound unwinder takes shared tables (MODE_TABLES). */
int jf__unwinders_take_tables(void);

#endif
