/*
 * jitframes — make run-time generated machine code visible to perf, gdb and lldb.
 *
 * This header is the whole public API and its manual.
 *
 * A runtime (interpreter, VM, JIT) tells jitframes about code it generated:
 * an address range, a name, and optionally source lines and unwind rules.
 * jitframes forwards each region to the enabled *sinks*:
 *
 *   perfmap  /tmp/perf-<pid>.map, read by perf, bcc, bpftrace, Parca...
 *   jitdump  <dir>/jit-<pid>.dump, read by `perf inject --jit` (names, lines, unwind info)
 *   gdb      the GDB JIT interface, read by gdb and lldb
 *   unwind   the process's own unwinder (backtrace(), C++ exceptions)
 *
 * Interpreters can also ask for a *trampoline* per interpreted function: a tiny
 * native frame with its own name that calls the eval function (see below).
 *
 * Conventions
 * - Every function returning int returns 0 on success or a negative JF_E* code.
 *   jf_strerror() names the code; jf_last_error() gives a thread-local message
 *   describing the failure of the calling thread's last jitframes call ("" if
 *   that call succeeded).
 * - Threads: every function may be called from any thread, concurrently with
 *   any other, except on one unwind description (jf_cfi): the builder calls
 *   (jf_cfi_begin_fde ... jf_cfi_add_standard_frame) and jf_cfi_free on one
 *   jf_cfi must not overlap each other or a call reading it (jf_register,
 *   jf_register_batch, jf_jitdump_footprint). Build each description in one
 *   thread; once built, any number of threads may pass it to those calls.
 *   Different descriptions may be built in different threads at once.
 * - The library never aborts, exits or asserts on caller input, and never
 *   raises SIGXFSZ or SIGBUS in the host — with one exception it cannot
 *   prevent: the jitdump and perf map sinks write their files through shared
 *   mappings (space allocated, RLIMIT_FSIZE checked, before it is mapped), so
 *   if someone truncates a live jit-<pid>.dump or /tmp/perf-<pid>.map while
 *   this process runs, the next registration that writes past the new end of
 *   the file raises SIGBUS. Nothing that reads them (perf, `perf inject`, bcc,
 *   bpftrace, `jitframes check`) truncates them; do not, and do not let
 *   another perf map writer in the process open the map with O_TRUNC (fopen
 *   "w") after jf_init — writers that append (O_APPEND, as CPython's) are
 *   fine, see jf_register_batch.
 * - Structs passed in carry a `struct_size` member set to sizeof(the struct) as
 *   the caller compiled it, so later versions can add fields without breaking
 *   callers: fields a caller's struct does not have take their defaults, and
 *   a struct larger than this version's keeps its extra fields untouched.
 *   Use the *_INIT macros to initialise them.
 */
#ifndef JITFRAMES_H
#define JITFRAMES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define JF_API __attribute__((visibility("default")))
#else
#define JF_API
#endif

/* The version of this header. Versioning: while the major version is 0, a
 * minor release may change the ABI, so the shared library's SONAME carries
 * major.minor (libjitframes.so.0.2); from 1.0 on the SONAME is the major
 * version alone, a minor release only adds (functions, struct fields behind
 * struct_size, error codes, sink bits) and a patch release only fixes. */
#define JF_VERSION_MAJOR 0
#define JF_VERSION_MINOR 2
#define JF_VERSION_PATCH 0

/* The version of the library the program runs with, e.g. "0.2.0". */
JF_API const char *jf_version_string(void);

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

enum jf_error {
    JF_OK = 0,
    JF_EINVAL = -1,     /* bad argument (NULL/empty name, size 0, bad sink word...) */
    JF_ENOMEM = -2,     /* out of memory */
    JF_ENOTINIT = -3,   /* jf_init() has not been called (or shutdown already balanced it) */
    JF_EEXIST = -4,     /* a live region already starts at this address */
    JF_ENOENT = -5,     /* no live region starts at this address; or no such file or directory */
    JF_EUNSAFE = -6,    /* refused an unsafe file: symlink, foreign owner, not a regular file */
    JF_EACCES = -7,     /* permission denied (unwritable directory, noexec mount...) */
    JF_ENOSPC = -8,     /* disk full */
    JF_EFBIG = -9,      /* the file would exceed RLIMIT_FSIZE */
    JF_EIO = -10,       /* another I/O error */
    JF_EDISABLED = -11, /* the sink disabled itself after an earlier failure */
    JF_ENOTSUP = -12,   /* not supported (sink not built, architecture, no exec memory) */
    JF_ERANGE = -13,    /* value out of range (address arithmetic, arena reach) */
    JF_ESINK = -14,     /* jf_init: initialised, but a sink could not start (see jf_init) */
    JF_EINTERNAL = -15, /* a bug in jitframes: a state its code rules out was reached (please
                           report jf_last_error()); nothing was changed, the host runs on */
};

/* A static string naming an error code ("JF_EINVAL: invalid argument"). */
JF_API const char *jf_strerror(int err);

/* A message describing why the calling thread's last jitframes call failed
 * ("" if it succeeded; for JF_ESINK, which sink and why). The pointer stays
 * valid until the thread's next jitframes call. */
JF_API const char *jf_last_error(void);

/* ------------------------------------------------------------------------ */
/* Lifecycle and sinks                                                       */
/* ------------------------------------------------------------------------ */

/* Sink bits. */
#define JF_SINK_PERFMAP 0x1u
#define JF_SINK_JITDUMP 0x2u
#define JF_SINK_GDB 0x4u
#define JF_SINK_UNWIND 0x8u
#define JF_SINK_ALL 0xfu
#define JF_SINK_COUNT 4

/* Do not read the JITFRAMES, JITFRAMES_DIR, JITFRAMES_LOG and
 * JITFRAMES_CONTROL variables. Other flag bits are JF_EINVAL. A program
 * running with privileges its caller lacks (setuid, setgid, file
 * capabilities: the kernel's AT_SECURE) never reads them, as if this flag
 * were set: the caller's environment cannot choose where it writes. */
#define JF_CONFIG_IGNORE_ENV 0x1u

/*
 * Let `jitframes enable|disable|status PID` (the tool) control this process
 * from outside: the control channel. $JITFRAMES_CONTROL=1 asks for it too
 * (read at the first jf_init unless JF_CONFIG_IGNORE_ENV; "0" or unset: no).
 * With it the library starts one thread that waits, blocked in poll() with
 * no timeout, on an abstract AF_UNIX socket named "jitframes/<pid>.<random>"
 * (no file anywhere; SOCK_CLOEXEC, so an exec leaves nothing); idle it uses
 * no CPU (docs/guide.md gives bench_control's figure). It blocks every signal.
 * It obeys only clients running as this process's effective uid or as root
 * of its user namespace, as the kernel maps them (SO_PEERCRED), never one
 * with no mapping there; others are refused and logged (sampled). A
 * request can enable sinks (exactly jf_enable: live regions are replayed),
 * disable them, or ask for the status (sinks, jf_stats counters, the
 * jitdump directory, pid, version); a malformed one is answered with an
 * error and changes nothing, and a client gets at most 1 s to send it;
 * clients are served side by side, none waits for another.
 * After fork() the child starts its own channel (own socket, own pid); the
 * last jf_shutdown stops the thread and closes the socket. If the channel
 * cannot start (no socket or thread), jf_init returns JF_ESINK and the
 * library works on without it. docs/formats.md, "Control channel", gives
 * the protocol.
 */
#define JF_CONFIG_CONTROL 0x2u

/* Do not publish the regions in memory (see "The published table" below):
 * for a host that wants no reader, even one allowed to ptrace it, to find
 * them without a sink. Honoured by the first jf_init only. */
#define JF_CONFIG_NO_TABLE 0x4u

/*
 * For runtimes whose own state follows the sinks (the CPython client installs
 * its frame hook only while a sink is on): fn is called on the control
 * channel's thread after a request from outside enabled or disabled sinks,
 * with the sinks now enabled, once the tool has its answer. It runs with no
 * jitframes lock held (it may call jf_enabled_sinks, jf_stats); the next
 * request waits until it returns, the host never does: hand the work to the
 * runtime's own thread (CPython: Py_AddPendingCall). Set it before
 * starting the channel; NULL removes it (a call already started may still
 * finish). Callbacks from other requests or threads are never made.
 */
typedef void (*jf_control_fn)(void *ctx, unsigned sinks);
JF_API void jf_set_control_callback(jf_control_fn fn, void *ctx);

typedef struct jf_config {
    size_t struct_size;   /* sizeof(jf_config) */
    unsigned sinks;       /* JF_SINK_* bits enabled in addition to $JITFRAMES */
    unsigned flags;       /* JF_CONFIG_* */
    const char *dump_dir; /* jitdump directory; NULL: $JITFRAMES_DIR, else /tmp */
} jf_config;

/* clang-format off */
#define JF_CONFIG_INIT {sizeof(jf_config), 0u, 0u, NULL}
/* clang-format on */

/*
 * Initialise (reference-counted). The first call sets the library up: it reads
 * $JITFRAMES (a comma list of sink words: perfmap, jitdump, gdb, unwind; "all"
 * means every sink), $JITFRAMES_DIR, $JITFRAMES_LOG and $JITFRAMES_CONTROL
 * unless JF_CONFIG_IGNORE_ENV is set or the program is setuid/setgid
 * (AT_SECURE), and enables those sinks plus
 * config->sinks. Later calls only add config->sinks (and start the control
 * channel if JF_CONFIG_CONTROL asks). config may be NULL.
 * Returns:
 *   0          initialised, every requested sink running;
 *   JF_ESINK   initialised, but a requested sink could not start (an unsafe
 *              or unwritable file, a missing JITFRAMES_DIR...): the others
 *              run; jf_last_error() names the sink and the cause (with its
 *              code, e.g. JF_ENOENT, JF_EACCES, JF_EUNSAFE), jf_stats()
 *              marks it failed, jf_enabled_sinks() leaves it out, and
 *              jf_enable() of that sink retries it and returns its own error;
 *              or the control channel asked for could not start (jf_last_error()
 *              says so; the sinks run);
 *   any other  nothing initialised: JF_EINVAL (bad config, an unknown word
 *              in $JITFRAMES, a too long directory), JF_ENOMEM, JF_ERANGE.
 * Every call that returned 0 or JF_ESINK must be balanced by one jf_shutdown().
 */
JF_API int jf_init(const jf_config *config);

/*
 * Drop one reference. The last one closes every sink (jitdump writes
 * CODE_CLOSE) and forgets every region. Files stay on disk: perf reads them
 * after the process exits. JF_ENOTINIT if not initialised.
 */
JF_API int jf_shutdown(void);

/*
 * fork(). In the child, right after fork() returns (pthread_atfork), every
 * enabled sink leaves the parent's files and state untouched and starts its
 * own with every region the child inherited (those live at the fork):
 *   perfmap  /tmp/perf-<child pid>.map, the inherited lines first
 *   jitdump  <dir>/jit-<child pid>.dump, the inherited loads first
 *   gdb      the child's descriptor is rebuilt with the inherited regions
 *   unwind   the inherited tables stay registered in the child's unwinder
 * Parent and child then register and unregister independently; neither
 * ever writes the other's files. Trampolines keep working in the child.
 * A child made by a raw fork or clone system call (no atfork handlers)
 * gets the same at its first jitframes call, before that call does
 * anything. Either way, a fork while another thread is inside jitframes is
 * safe only through fork() (its handlers hold the locks across it).
 */

/* Parse a comma list of sink words into JF_SINK_* bits: perfmap, jitdump,
 * gdb, unwind, and "all" or "1" for every sink; case and spaces around words
 * do not matter, empty words are skipped ("PerfMap, jitdump" is fine).
 * JF_EINVAL, with the offending word in jf_last_error(), on an unknown word. */
JF_API int jf_parse_sinks(const char *list, unsigned *sinks_out);

/* The word jf_parse_sinks reads for one sink bit: "perfmap" for
 * JF_SINK_PERFMAP, then "jitdump", "gdb", "unwind" (jf_sink_name(1u << i)
 * names jf_stats.sink[i]). NULL for 0, for a bit no sink has, or for several
 * bits. A static string; callable at any time, from any thread, without
 * jf_init; jf_last_error() is left as it was. */
JF_API const char *jf_sink_name(unsigned sink);

/*
 * Enable sinks. A sink enabled while regions are live first receives every
 * live region (a replay), so late enabling loses nothing. Enabling a sink that
 * failed earlier retries it. If a sink cannot start, its error is returned and
 * the other requested sinks are still enabled.
 * Standby: initialised with no sink, the library writes nothing at all (no
 * file, no directory) and only keeps the registry and its published table
 * (below); jf_enable then replays the live regions into the sink. What a
 * registration costs in standby and what a replay takes: docs/guide.md,
 * "What each sink costs".
 */
JF_API int jf_enable(unsigned sinks);

/* Disable sinks. Files written so far stay as they are. */
JF_API int jf_disable(unsigned sinks);

/* The JF_SINK_* bits currently enabled (and not failed). 0 if not initialised. */
JF_API unsigned jf_enabled_sinks(void);

/* Log levels passed to the callback. */
enum jf_log_level { JF_LOG_ERROR = 0, JF_LOG_WARNING = 1, JF_LOG_INFO = 2, JF_LOG_DEBUG = 3 };

typedef void (*jf_log_fn)(void *ctx, int level, const char *message);

/*
 * Route diagnostics (a sink disabling itself, replay failures...) to fn.
 * Without a callback they are dropped, unless $JITFRAMES_LOG is set: "1",
 * "error", "warning", "info" or "debug" print messages up to that level to
 * stderr. fn may be called from any thread, with an internal lock held: it
 * must not call back into jitframes. Pass NULL to remove the callback.
 */
JF_API void jf_set_log_callback(jf_log_fn fn, void *ctx);

/* ------------------------------------------------------------------------ */
/* Code regions                                                              */
/* ------------------------------------------------------------------------ */

/* One row of a line table: code at region offset `offset` and up to the next
 * row comes from `file`:`line` (file NULL: the region's file). */
typedef struct jf_line {
    size_t offset;
    uint32_t line;
    const char *file;
} jf_line;

/* An unwind description built with the CFI assembler below. */
typedef struct jf_cfi jf_cfi;

typedef struct jf_region {
    size_t struct_size;   /* sizeof(jf_region) */
    const void *addr;     /* first byte of the code; not NULL */
    size_t size;          /* bytes; > 0, addr + size must not wrap */
    const char *name;     /* not NULL or empty; sanitised, see below */
    const char *file;     /* optional source file */
    uint32_t line;        /* optional first line of `file` (0: unknown) */
    const jf_line *lines; /* optional line table, sorted by offset */
    size_t n_lines;
    const jf_cfi *cfi; /* optional unwind rules; NULL: no unwind info is emitted */
} jf_region;

/* clang-format off */
#define JF_REGION_INIT {sizeof(jf_region), NULL, 0, NULL, NULL, 0, NULL, 0, NULL}
/* clang-format on */

/* Longest name kept, in bytes; longer names are cut at a UTF-8 boundary. */
#define JF_NAME_MAX 4000

/*
 * Register one region. Everything the region points to is copied: the caller
 * may free it on return. Names are sanitised once for every sink: control
 * characters (newline, CR, tab, DEL, the C1 range...), the bidirectional
 * formatting characters (U+202E...), bytes that are not valid UTF-8 and
 * leading spaces become '?', so a name can never forge a perf map entry,
 * read as a second field separator or act on a terminal.
 *
 * When this returns 0, every enabled sink holds the region durably (its
 * bytes are in the kernel; a SIGKILL right after loses nothing).
 *
 * With the jitdump sink enabled, the region's `size` bytes at `addr` are
 * read (copied into the dump, for `perf annotate`): they must be readable.
 *
 * Errors: JF_ENOTINIT, JF_EINVAL (bad region; nothing registered), JF_EEXIST
 * (a live region starts at addr; nothing registered), JF_ENOMEM. A sink that
 * fails (disk full...) disables itself, logs once and its error is returned:
 * the region is then still registered, with the other sinks. JF_ERANGE: a
 * sink cannot describe this region in its format (a jitdump record holds
 * less than 2 GiB of code and line table); the region is registered and in
 * every other sink, that sink stays enabled and counts it in jf_stats()
 * errors, and jf_last_error() names the region.
 */
JF_API int jf_register(const jf_region *region);

/*
 * Register n regions as one group: one jitdump record group, one gdb symfile,
 * one unwinder table, one perf map write. All-or-nothing validation: if any
 * region is invalid, nothing is registered and jf_last_error() names its
 * index. n == 0 is a no-op.
 *
 * Cost, perf map sink: no system call per call. Lines are stored through a
 * shared mapping into space reserved ahead by appending newlines (one
 * O_APPEND write per 4 KiB to 1 MiB of lines, RLIMIT_FSIZE checked and the
 * space allocated then): a line is in the kernel's page cache when the call
 * returns, as durable as with write(2); a batch saves little more than that
 * per region. A fresh process also pays for the table's pages, ~110 bytes
 * per region (2 MiB pages for what it touches past 16,384 regions).
 * Measured costs, against fprintf + fflush and one write(2) per line:
 * docs/guide.md, "What each sink costs".
 * The file: lines are published whole (a process killed at any instant
 * leaves no torn line; at worst one line starting "##", which readers skip),
 * in reserved space that is never truncated, so the map ends with up to
 * 1 MiB of blank lines (perf, bcc and bpftrace skip them; `jitframes check`
 * reports them as unused space). Another writer appending to the same map
 * with O_APPEND (CPython's PyUnstable_WritePerfMapEntry, a second runtime)
 * loses no line and gets none of ours over its own: its lines land after
 * our reserved space.
 */
JF_API int jf_register_batch(const jf_region *regions, size_t n);

/*
 * Unregister the live region starting at addr (JF_ENOENT if none).
 * What that means per sink:
 *   perfmap  nothing: the map has no way to express removal. perf keeps
 *            attributing the range to the old name, and a region registered
 *            later at an overlapping address is ambiguous (perf takes the first
 *            entry, other readers the last). Runtimes that reuse code memory
 *            should use jitdump.
 *   jitdump  nothing is written; a later CODE_LOAD at the same address is
 *            timestamped, so perf attributes samples correctly over time.
 *   gdb      the region's symfile is unregistered, or rebuilt without it:
 *            symfiles hold at most 32,767 regions (typically 4-6k), which
 *            bounds what one unregistration costs (see "gdb and lldb" below).
 *   unwind   the region's FDEs are removed from the process unwinder.
 * After this returns the address may be reused for a new region.
 */
JF_API int jf_unregister(const void *addr);

/* One region moved by a collector or a code-cache compaction: the live region
 * starting at `from` now starts at `to` (same size, same bytes). */
typedef struct jf_region_move {
    const void *from;
    const void *to;
} jf_region_move;

/*
 * The code of the live region starting at old_addr was moved to new_addr
 * (copied: the same bytes, the same size). The region keeps its name, line
 * table and unwind rules, all relative to its start. Call it once the code is
 * at new_addr, before it runs there; the old copy may be freed on return.
 * What that means per sink:
 *   perfmap  a new line at new_addr. The old line stays (a map cannot
 *            remove one): readers go on naming the old range after the
 *            region, and code registered there later is ambiguous (perf
 *            takes the first line, bcc and bpftrace the last), as after
 *            jf_unregister. A runtime that reuses the range should use jitdump.
 *   jitdump  a CODE_MOVE record with the region's original code index:
 *            `perf inject --jit` maps the same jitted-<pid>-<index>.so at
 *            new_addr from then on, so samples before and after the move
 *            carry the same symbol and lines. A region loaded with unwind
 *            data gets its CODE_UNWINDING_INFO again first, which makes
 *            perf's new mapping cover that data: call chains go on through
 *            the moved code. As for a CODE_LOAD, leave
 *            jf_jitdump_footprint(size, cfi) bytes at new_addr.
 *   gdb      the region's symfile is rebuilt without it and the region is
 *            registered at new_addr in a new one: nothing is named at the old
 *            address any more. Costs an unregistration plus a registration
 *            (see "gdb and lldb" below).
 *   unwind   the region's FDEs are removed and registered at new_addr.
 * Errors, each with nothing changed: JF_ENOTINIT; JF_ENOENT (no live region
 * starts at old_addr); JF_EEXIST (the region at new_addr would overlap
 * another live region's code; its own old range does not count, so a region
 * may slide within itself); JF_EINVAL (new_addr + size wraps, NULL new_addr);
 * JF_ENOMEM. A sink that then fails disables itself and its error is
 * returned, as for jf_register; the move itself stands. old_addr == new_addr
 * does nothing and returns 0. Not for trampolines: their code is the
 * library's (jf_trampoline_destroy finds them by their entry address).
 */
JF_API int jf_move(const void *old_addr, const void *new_addr);

/*
 * Move n regions at once (one compaction): all or nothing. Each move is
 * checked against the regions as they will be after the whole batch, so a
 * region may move into the range another region of the same batch leaves.
 * The same region named twice is JF_EINVAL; jf_last_error() names the index
 * of the move at fault. Sinks get one group: one jitdump record group, one
 * gdb symfile for the moved regions, one unwinder table. n == 0 is a no-op.
 */
JF_API int jf_move_batch(const jf_region_move *moves, size_t n);

/* ------------------------------------------------------------------------ */
/* Unwind descriptions: the DWARF CFI assembler                              */
/* ------------------------------------------------------------------------ */
/*
 * A jf_cfi describes how to unwind a region: one or more FDEs, each covering
 * a sub-range [start, end) of the region (offsets from its first byte), each
 * a sequence of CFA rules as in DWARF (.cfi_* directives in assembly). Every
 * FDE starts from the architecture's state at function entry (x86_64: CFA =
 * rsp + 8, return address at CFA - 8; aarch64: CFA = sp, return address in
 * x30; riscv64: CFA = sp, return address in ra; ppc64le: CFA = r1, return
 * address in LR; s390x: CFA = r15 + 160, the caller's register save area,
 * return address in r14). Parts of a region not covered by any FDE get no
 * unwind information — never a guessed one.
 * Registers are DWARF numbers of the host architecture (JF_DWARF_*), at most
 * 127 (JF_EINVAL above): the general, floating-point and vector registers
 * of the five psABIs (ppc64le's LR is 65).
 * remember_state may nest 16 deep.
 * A region's jf_cfi is copied at registration; free yours when done.
 *
 * Encoding limits (DWARF factors, as the system assembler uses them):
 * - offsets given to jf_cfi_advance_to must differ by multiples of the code
 *   alignment (1 on x86_64, riscv64 and s390x, 4 on aarch64 and ppc64le);
 * - jf_cfi_offset's cfa_offset, and negative CFA offsets, must be multiples
 *   of the data alignment (-8 on x86_64, aarch64, ppc64le and s390x, -4 on
 *   riscv64). A positive cfa_offset (ppc64le's LR at CFA + 16) is fine.
 * Anything else is JF_EINVAL.
 *
 * Errors are sticky: after a builder call fails (JF_EINVAL, JF_ENOMEM...),
 * the description is incomplete and registering a region with it fails with
 * JF_EINVAL. Build a new one.
 */
#if defined(__x86_64__)
#define JF_DWARF_SP 7u
#define JF_DWARF_FP 6u
#define JF_DWARF_RA 16u
#elif defined(__aarch64__)
#define JF_DWARF_SP 31u
#define JF_DWARF_FP 29u
#define JF_DWARF_RA 30u
#elif defined(__riscv) && __riscv_xlen == 64
#define JF_DWARF_SP 2u
#define JF_DWARF_FP 8u
#define JF_DWARF_RA 1u
#elif defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
#define JF_DWARF_SP 1u  /* r1 */
#define JF_DWARF_FP 31u /* r31 */
#define JF_DWARF_RA 65u /* LR */
#elif defined(__s390x__)
#define JF_DWARF_SP 15u /* r15 */
#define JF_DWARF_FP 11u /* r11 */
#define JF_DWARF_RA 14u /* r14 */
#endif

/* A new, empty description for the host architecture (JF_ENOTSUP on hosts
 * other than x86_64, aarch64, riscv64, ppc64le and s390x). The description
 * is not safe to share while it is built: see "Threads" at the top;
 * registering copies it. */
JF_API int jf_cfi_new(jf_cfi **out);
/* NULL is fine. */
JF_API void jf_cfi_free(jf_cfi *cfi);

/* Start an FDE for region offsets [start, end); the rules below apply to it. */
JF_API int jf_cfi_begin_fde(jf_cfi *cfi, size_t start, size_t end);
/* Rules that follow take effect at region offset `offset` (non-decreasing, inside the FDE). */
JF_API int jf_cfi_advance_to(jf_cfi *cfi, size_t offset);
JF_API int jf_cfi_def_cfa(jf_cfi *cfi, unsigned reg, int64_t offset);
JF_API int jf_cfi_def_cfa_offset(jf_cfi *cfi, int64_t offset);
JF_API int jf_cfi_def_cfa_register(jf_cfi *cfi, unsigned reg);
/* reg is saved at CFA + cfa_offset. */
JF_API int jf_cfi_offset(jf_cfi *cfi, unsigned reg, int64_t cfa_offset);
/* reg's value in the caller is CFA + cfa_offset itself, saved nowhere
 * (.cfi_val_offset). s390x code that moves r15 without storing it needs
 * jf_cfi_val_offset(cfi, 15, -160): the unwinders there take an r15 without
 * a rule as unchanged (jf_cfi_add_frameless says it by itself). */
JF_API int jf_cfi_val_offset(jf_cfi *cfi, unsigned reg, int64_t cfa_offset);
JF_API int jf_cfi_restore(jf_cfi *cfi, unsigned reg);
JF_API int jf_cfi_same_value(jf_cfi *cfi, unsigned reg);
JF_API int jf_cfi_remember_state(jf_cfi *cfi);
JF_API int jf_cfi_restore_state(jf_cfi *cfi);

/*
 * Common shapes. Each adds one FDE for [start, end).
 *
 * Frameless code: CFA = SP + cfa_sp_offset over the whole range, the return
 * address where it was at entry (x86_64: at CFA - 8; aarch64, riscv64,
 * ppc64le, s390x: in the link register). cfa_sp_offset is the full distance,
 * entry state included: x86_64 code that did `sub $24, %rsp` after being
 * called runs with 32; aarch64 code that did `sub sp, sp, #32` runs with 32;
 * s390x code that has not moved r15 runs with 160. cfa_sp_offset >= 0.
 * On s390x the caller's r15 is CFA - 160, which gdb and libgcc do not work
 * out themselves: where r15 has moved, the description also says so.
 */
JF_API int jf_cfi_add_frameless(jf_cfi *cfi, size_t start, size_t end, int64_t cfa_sp_offset);

/*
 * The standard frame-pointer frame of the host architecture: a 16-byte frame
 * record {caller's FP, return address} pushed at entry, FP pointing at it,
 * then any stack use at all in the body (the CFA is FP-based there):
 *
 *   x86_64   push %rbp                  after_push = offset after it   CFA = rsp + 16
 *            mov  %rsp, %rbp            after_fp_set = offset after it CFA = rbp + 16
 *            ... body (ends with mov %rbp, %rsp if it moved rsp) ...
 *            pop  %rbp                  epilogue_start = its offset (optional)
 *                                       after_pop = offset after it    CFA = rsp + 8
 *            ret
 *            (`leave` instead of mov+pop: epilogue_start 0, after_pop after leave)
 *   aarch64  stp  x29, x30, [sp, #-16]! after_push                     CFA = sp + 16
 *            mov  x29, sp               after_fp_set                   CFA = x29 + 16
 *            ... body (ends with mov sp, x29 if it moved sp) ...
 *            ldp  x29, x30, [sp], #16   epilogue_start = its offset (optional)
 *                                       after_pop                      CFA = sp
 *            ret
 *   riscv64  addi sp, sp, -16           after_push                     CFA = sp + 16
 *            sd   ra, 8(sp)
 *            sd   s0, 0(sp)
 *            addi s0, sp, 16            after_fp_set                   CFA = s0
 *            ... body (ends with addi sp, s0, -16 if it moved sp) ...
 *            ld   ra, 8(sp)             epilogue_start = its offset (REQUIRED with after_pop)
 *            ld   s0, 0(sp)
 *            addi sp, sp, 16            after_pop                      CFA = sp
 *            ret
 *
 * after_* are region offsets just after the named instruction; epilogue_start
 * is the offset of the first epilogue instruction, where SP points at the
 * frame record again (SP = CFA - 16) and FP still holds its value: from there
 * the CFA is SP-based. start < after_push < after_fp_set [<= epilogue_start]
 * < after_pop <= end. after_pop = 0: no epilogue in the range (the frame
 * stays up to `end`). The saved FP and return address are at CFA - 16 and
 * CFA - 8 (on riscv64 described from after_fp_set: until then both registers
 * still hold their values) and restored after the pop. A function with
 * several epilogues or other saved registers needs the rule calls above
 * (remember_state / restore_state).
 * ppc64le and s390x have no such frame record (ppc64le saves LR in the
 * caller's frame at CFA + 16, s390x r14 and r15 in the caller's save area):
 * JF_ENOTSUP there; describe their frames with the rule calls.
 */
typedef struct jf_standard_frame {
    size_t struct_size; /* sizeof(jf_standard_frame) */
    size_t start, end;
    size_t after_push;
    size_t after_fp_set;
    size_t epilogue_start; /* 0: none */
    size_t after_pop;      /* 0: none */
} jf_standard_frame;

/* clang-format off */
#define JF_STANDARD_FRAME_INIT {sizeof(jf_standard_frame), 0, 0, 0, 0, 0, 0}
/* clang-format on */

JF_API int jf_cfi_add_standard_frame(jf_cfi *cfi, const jf_standard_frame *frame);

/* ------------------------------------------------------------------------ */
/* Trampolines for interpreters                                              */
/* ------------------------------------------------------------------------ */

/*
 * A trampoline is a tiny native function with its own address and name that
 * calls one target function (an interpreter's eval function): an interpreter
 * calls each interpreted function's trampoline instead of calling eval
 * directly, so perf, gdb and lldb show one named frame per interpreted call.
 *
 * Each one is a copy of a per-architecture template (src/arch/<arch>.S):
 * one indirect call through a data slot holding the target, inside the
 * frame the ABI makes usual:
 *   x86_64   a standard frame record (push rbp; mov rbp,rsp)
 *   aarch64  a standard frame record (stp x29,x30; mov x29,sp)
 *   riscv64  ra and s0 saved, s0 set: a frame record
 *   ppc64le  LR saved in the caller's frame at 16(r1), a 96-byte frame
 *            with the back chain (stdu), r2 saved and restored
 *   s390x    r14 and r15 saved in the caller's register save area, a
 *            160-byte frame, no back chain (the ABI makes it optional)
 * Frame-pointer unwinders pass through it on x86_64, aarch64 and riscv64,
 * and back chain walkers (perf -g) on ppc64le; on s390x only unwinding by
 * its rules does (perf --call-graph dwarf, gdb, the unwind sink). It is
 * registered with those rules, taken at build time from the assembler's
 * own .eh_frame.
 *
 * What is forwarded. The trampoline has the target's signature: every
 * register the calling convention uses for arguments and results passes
 * through untouched, so any eval signature works — CPython's
 * (tstate, frame, throwflag), Lua's (L, ci), a Ruby-style (ec)...
 *   x86_64   rdi rsi rdx rcx r8 r9, xmm0-7, al (variadic), r10; results in
 *            rax rdx xmm0 xmm1 (hidden struct-return pointer in rdi works).
 *            Clobbers nothing else.
 *   aarch64  x0-x7, x8 (indirect result), v0-v7; results in x0-x1, v0-v3.
 *            Clobbers x16 (IP0, reserved for exactly this by the ABI).
 *   riscv64  a0-a7, fa0-fa7; results in a0-a1, fa0-fa1. Clobbers t0.
 *   ppc64le  r3-r10, f1-f13, v2-v13; results in r3-r4, f1-f8, v2. r2 (TOC)
 *            is restored after the call. Clobbers r0, r12, ctr.
 *   s390x    r2-r6, f0 f2 f4 f6; results in r2, f0. Clobbers r1.
 * What is NOT forwarded: arguments passed on the stack. The trampoline's
 * frame sits between the caller's outgoing arguments and the target, so the
 * target would read the wrong memory: x86_64's 7th integer argument and
 * beyond, structs passed by value in memory, long double; aarch64's and
 * riscv64's 9th integer argument and beyond; ppc64le's 9th; s390x's 6th
 * integer and 5th floating-point argument. Keep eval signatures to
 * register arguments (pass a pointer to anything larger).
 * Other effects: the target's return address is inside the trampoline; a C++
 * exception can unwind through a trampoline only when the process unwinder
 * knows its rules (the `unwind` sink); longjmp is unaffected.
 *
 * Memory. Copies live in arenas mapped near the target when the kernel allows
 * it (calls to a target more than 2 GiB away cost more on x86_64), never
 * writable and executable at once, never unmapped (a frame may still run in
 * them). Per trampoline, code + data: 24 bytes on x86_64, 40 on aarch64,
 * riscv64 and s390x, 72 on ppc64le; when the jitdump sink is enabled, copies
 * are spaced so perf's synthesized mappings for their unwind info do not
 * overlap: 104 bytes on x86_64, 128 on aarch64, riscv64 and s390x, 160 on
 * ppc64le. The spacing is chosen at creation:
 * enable jitdump before creating trampolines (copies made earlier stay
 * packed and their records clash when jitdump is enabled later;
 * jf_jitdump_overlaps() counts the clashes between consecutive records).
 * The registry's record (name, file; the unwind rules are shared) comes on
 * top (bench/bench_trampoline measures both; docs/guide.md gives the
 * figure).
 */

/* A generic function pointer; cast to and from your eval function's type. */
typedef void (*jf_fn)(void);

typedef struct jf_trampoline_options {
    size_t struct_size; /* sizeof(jf_trampoline_options) */
    const char *file;   /* optional source file of the interpreted function */
    uint32_t line;      /* optional line */
    size_t align;       /* 0 (8 bytes), or a power of two up to 64 each copy starts at */
} jf_trampoline_options;

/* clang-format off */
#define JF_TRAMPOLINE_OPTIONS_INIT {sizeof(jf_trampoline_options), NULL, 0, 0}
/* clang-format on */

/*
 * Create a trampoline named `name` (and opts->file:line) that calls
 * `target`: call *entry_out instead of target, with the same register
 * arguments (see above). It is registered with every enabled sink under its
 * own name, as a region of the template's size with its unwind rules.
 * opts may be NULL. All or nothing: on error nothing is created and
 * *entry_out is untouched.
 *
 * Errors: JF_EINVAL (NULL target/name/entry_out, empty name, bad options),
 * JF_ENOTINIT (call jf_init() first), JF_ENOTSUP (no template for this
 * architecture), JF_EACCES (the host forbids executable memory: SELinux
 * execmem, a PaX/seccomp/noexec policy; the message says so), JF_ENOMEM.
 * A sink that fails while the trampoline is registered (disk full...)
 * disables itself and logs once, as with jf_register; the trampoline is
 * still created, named in the other sinks, and 0 is returned (jf_stats()
 * shows the failed sink).
 * Fallback for JF_EACCES and JF_ENOTSUP: call the target directly — the
 * program works the same, only without per-function frames.
 *
 * Any thread may call it. After fork() the child's trampolines keep working
 * (the arenas are inherited) and it may create and destroy its own; see
 * fork() under "Lifecycle and sinks" above for what the sinks do. After the
 * last jf_shutdown() trampolines keep working, unregistered; jf_init() again
 * does not register them again.
 */
JF_API int jf_trampoline_create(jf_fn target, const char *name, const jf_trampoline_options *opts,
                                jf_fn *entry_out);

/*
 * Unregister a trampoline and put its copy up for reuse by a later create.
 * The caller guarantees that no thread is still about to call it: afterwards
 * a call through it faults (its slot no longer holds the target) or, once
 * reused, reaches another target. JF_ENOENT if entry is not a live
 * trampoline (never created, or already destroyed).
 */
JF_API int jf_trampoline_destroy(jf_fn entry);

/* ------------------------------------------------------------------------ */
/* jitdump specifics                                                         */
/* ------------------------------------------------------------------------ */
/*
 * Every CODE_LOAD record carries the region's real code followed by this many
 * unique bytes (a nonce), counted in its code_size. A perf that derives
 * build-ids from the code bytes can then never merge two regions with
 * identical code. The live code is never touched; `perf annotate` shows the
 * real instructions followed by the nonce bytes. On riscv64, ppc64le and
 * s390x (every architecture but x86_64 and aarch64) up to 3 zero bytes
 * follow the nonce, so that every record starts 4-aligned: the store that
 * publishes a record group must be one aligned store there to be atomic.
 */
#define JF_JITDUMP_NONCE_SIZE 8u

/*
 * Bytes from a region's first byte that the mapping perf synthesizes for its
 * CODE_LOAD covers: code_size + JF_JITDUMP_NONCE_SIZE without unwind info;
 * with unwind info (cfi not NULL) the load rounded up to 8 plus the mapped
 * size of its .eh_frame and .eh_frame_hdr. (Where the nonce is padded, see
 * above, the padding's 3-byte maximum is counted.) Leave at least this much room
 * between the start of a region and the start of the next one: perf splits
 * overlapping mappings, and the older region then loses its unwind data (or
 * its first bytes get the newer name). A region whose unwind data would
 * reach where another live region's code starts (code packed downwards, as
 * LuaJIT packs its traces) is written without it: it keeps its name and
 * lines, the other region its name, and only perf's DWARF unwinding through
 * it is lost (the other sinks keep its rules). Returns 0 with jf_last_error() set if
 * code_size is 0 or cfi is invalid for it. Needs no jf_init().
 */
JF_API size_t jf_jitdump_footprint(size_t code_size, const jf_cfi *cfi);

/*
 * How many regions were written whose synthesized mapping cut into the
 * previously written, still live region, plus those written without their
 * unwind data because it would have covered another live region's code (see
 * jf_jitdump_footprint). Such a region is still written; each occurrence is
 * counted here and the 1st, 2nd, 4th, 8th... are logged as warnings.
 */
JF_API uint64_t jf_jitdump_overlaps(void);

/* ------------------------------------------------------------------------ */
/* gdb and lldb (the gdb sink)                                               */
/* ------------------------------------------------------------------------ */
/*
 * The gdb sink implements the GDB JIT interface: the library defines
 * __jit_debug_register_code and __jit_debug_descriptor, and every
 * registration call becomes one in-memory ELF object (names, CFI, source
 * lines; the code itself is not copied; up to 16,384 regions per object)
 * that gdb and lldb read at once, or when they attach, or from a core file
 * written while it was live. A region holding several functions (a later
 * FDE that starts in the entry state, with no CFA rule before its first
 * advance) is named by one symbol per function, all with the region's name:
 * lldb 14 unwinds a frame by the FDE at the start of the symbol holding its
 * pc, and gdb shows offsets from that function's start (jit_fn + 5).
 *
 * Cost. Each registration call stops a debugger that is attached.
 * To keep that flat, objects of similar size are merged in levels (the merged
 * one is registered right after its parts go: lldb 14 drops the code of an
 * object registered while another at the same address was live), so live
 * objects stay few (jf_stats: sink[2].objects; docs/guide.md gives the
 * count at 100,000 regions). Register
 * many regions per call (jf_register_batch) when you can. jf_unregister
 * rebuilds the object holding the region, which costs in proportion to its
 * size; merging stops at 4,096-32,767 regions per object, which bounds that.
 * A move costs an unregistration plus a registration. bench_gdb's figures
 * for each, with and without a debugger: docs/guide.md, "What each sink
 * costs".
 *
 * Linking. The two symbols must be in the process's dynamic symbol table or
 * a stripped executable hides them. With the shared library they are. An
 * executable linking the static library needs
 *   -Wl,--export-dynamic-symbol=__jit_debug_register_code
 *   -Wl,--export-dynamic-symbol=__jit_debug_descriptor
 * which the CMake package (jitframes::jitframes_static, opt out with the
 * target property JITFRAMES_NO_EXPORT_DYNAMIC) and `pkg-config --static`
 * add. A stripped, fully static (-static) executable has no dynamic symbol
 * table: unsupported. Link-time garbage collection and LTO keep the symbols.
 *
 * Several JIT libraries. Another library in the process may have its own
 * descriptor (its own copy of jitframes or another JIT). gdb 13 reads every
 * descriptor and shows both libraries' code; lldb 14 reads only the first it
 * finds and leaves the other library's frames unnamed. Two copies of
 * jitframes must not share one descriptor (interposition): link a private
 * static copy inside a shared library with -Bsymbolic.
 */

/* ------------------------------------------------------------------------ */
/* The published table: live regions readable from the process's memory     */
/* ------------------------------------------------------------------------ */
/*
 * From jf_init (standby included) to the last jf_shutdown, every live region
 * (address, size, name, source file, first line, line table, unwind rules,
 * when it was published) and the last removed ones (with their removal
 * time; 16,384, or a 32nd of a grown table's slots, up to 65,536) are kept in a table another
 * process may read from this one's memory when the kernel lets it ptrace it:
 * `jitframes regions PID`, `jitframes perfmap PID`, `jitframes record PID`
 * (which follows it while perf records), an eBPF profiler. No
 * file is written and nothing needs switching on. Layout: docs/formats.md.
 * A private anonymous mapping, found by its name "[anon:jitframes-regions]"
 * in /proc/PID/maps where the kernel names anonymous mappings (else
 * unnamed: readers find it by its header), or through jf_region_table.
 * The first table (131,072 slots) is in 4 KiB pages; past 16,384 regions (or
 * 8 MiB of strings, line tables and unwind rules) it is advised
 * MADV_HUGEPAGE for what it touches next, and a grown table is in huge pages.
 * A forked child publishes its own table (the mapping is MADV_DONTFORK).
 * Cost: docs/guide.md.
 *
 * The table grows with what is registered (its slots and its heap, each
 * eightfold into a new mapping); a change costs O(1) at any fill. It never
 * makes the host fail: when it cannot be made (no memory) or
 * cannot grow, registration works as before, the oldest removed regions
 * give up their place first, a region still not published is counted
 * (jf_stats table_dropped) and jf_published_table says why.
 */

/* Where the table is (0 when there is none): a data symbol for readers that
 * read ELF symbols (exported by the static library like the GDB symbols). */
JF_API extern const void *volatile jf_region_table;

/* The table's address and size. 0; JF_ENOTINIT without jf_init; JF_ENOMEM
 * when it could not be made, JF_ERANGE when some regions were not published
 * (memory ran out and the table could not grow; jf_stats: table_dropped):
 * jf_last_error() gives the reason. */
JF_API int jf_published_table(const void **addr, size_t *size);

/* ------------------------------------------------------------------------ */
/* Statistics                                                                */
/* ------------------------------------------------------------------------ */

typedef struct jf_sink_stats {
    uint64_t regions; /* regions written to this sink (replays included) */
    uint64_t bytes;   /* bytes written (files) or held (symfiles, tables) */
    uint64_t errors;  /* failures */
    uint64_t objects; /* gdb: live symfiles; unwind: registered tables */
    int enabled;      /* 1 if enabled and not failed */
    int failed;       /* 1 if it disabled itself after a failure */
} jf_sink_stats;

/* A struct tag, not a typedef: jf_stats is also the function's name. */
struct jf_stats {
    size_t struct_size;                /* sizeof(struct jf_stats) */
    uint64_t live_regions;             /* regions currently registered */
    jf_sink_stats sink[JF_SINK_COUNT]; /* indexed perfmap, jitdump, gdb, unwind */
    uint64_t table_dropped;            /* registrations the published table could not hold (memory ran out
                                  * and it could not grow): readers see JF_PUB_INCOMPLETE and the
                                  * header's dropped count; jf_published_table says JF_ERANGE */
};

/* clang-format off */
#define JF_STATS_INIT {sizeof(struct jf_stats), 0, {{0, 0, 0, 0, 0, 0}}, 0}
/* clang-format on */

/* Fill *stats (its struct_size must be set; see the struct_size convention
 * at the top). Before jf_init, and after the last jf_shutdown, every counter
 * is 0. */
JF_API int jf_stats(struct jf_stats *stats);

#ifdef __cplusplus
}
#endif

#endif /* JITFRAMES_H */
