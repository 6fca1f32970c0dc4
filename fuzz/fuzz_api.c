/*
 * libFuzzer target over the library's own API. Each input is a small program
 * of calls — CFI builder calls, register, batch, unregister, enable, disable,
 * trampoline create and destroy — run between a jf_init with a sink set the
 * input picks and a jf_shutdown.
 * Regions live in a static buffer (the jitdump sink copies their bytes),
 * each at least jf_jitdump_footprint() after the previous one.
 *
 * What must hold for every input, beyond "no crash, no sanitizer report,
 * no leak":
 * - every call returns 0 or a JF_E* code that names bad input (never a
 *   sink failure: no file here can fail), and jf_strerror knows it;
 * - jf_stats' live_regions equals the harness's own count;
 * - every live GDB JIT symfile passes the jitframes tool's ELF checker;
 * - the perf map, and the jitdump after jf_shutdown, pass the tool's checkers
 *   (a jitdump may overlap only where jf_jitdump_overlaps() reported it);
 * - every trampoline forwards its arguments and result;
 * - libgcc's unwinder walks the stack with every unwind table registered
 *   (its first search parses every registered object).
 */
#define _GNU_SOURCE
#include "elf_reader.h"
#include "gdb_jit_view.h"
#include "jitdump_reader.h"
#include "perfmap_reader.h"

#include <jitframes.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <unwind.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { N_CFI = 3, MAX_LIVE = 256, MAX_BATCH = 8, MAX_LINES = 8, CODE_BYTES = 1 << 20, MAX_TRAMPOLINES = 32 };
/* The end of code[] is for moves to arbitrary places: fresh slots (the rest)
 * never meet them, as the library does not refuse a registration over
 * another region's code. */
enum { MOVE_AREA = 128 << 10, FRESH_BYTES = CODE_BYTES - MOVE_AREA };

/* The input, read front to back; reads past its end give zeros. */
typedef struct input {
    const uint8_t *p;
    size_t n;
} input;

static uint64_t take(input *in, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++) {
        v = v << 8 | (in->n ? *in->p : 0);
        if (in->n)
            in->p++, in->n--;
    }
    return v;
}

/* What one input's run holds. */
typedef struct run {
    jf_cfi *cfi[N_CFI];
    const uint8_t *live[MAX_LIVE];
    size_t room[MAX_LIVE]; /* bytes each region's slot in code[] holds */
    size_t n_live;
    jf_fn trampolines[MAX_TRAMPOLINES];
    size_t n_trampolines;
    uint64_t overlaps_before; /* jf_jitdump_overlaps() at jf_init */
    int packed;               /* a trampoline was made while jitdump was off */
    int destroyed;            /* a trampoline was destroyed... */
    int reused;               /* ...and one made after: its copy may sit where the
                                 old one was (see check_file); or a region was
                                 moved onto space some other region left */
    size_t next;              /* offset in code[] of the next region */
} run;

static _Alignas(4096) uint8_t code[CODE_BYTES];
static char dump_dir[] = "/tmp/jf-fuzz-api-XXXXXX";

static void fail(const char *what, int rc)
{
    fprintf(stderr, "fuzz_api: %s: %d (%s): %s\n", what, rc, jf_strerror(rc), jf_last_error());
    abort();
}

/* A return code for a call that may only fail on its input. */
static int check_rc(const char *what, int rc)
{
    if (rc > 0 || !jf_strerror(rc))
        fail(what, rc);
    if (rc == 0 || rc == JF_EINVAL || rc == JF_EEXIST || rc == JF_ENOENT || rc == JF_ENOMEM)
        return rc;
    fail(what, rc);
    return rc;
}

/* A register offset, small or anywhere in the DWARF range. */
static unsigned take_reg(input *in)
{
    unsigned r = (unsigned)take(in, 1);
    return r < 240 ? r % 40 : (unsigned)take(in, 2);
}

static int64_t take_offset(input *in)
{
    int64_t v = (int8_t)take(in, 1);
    return v == -128 ? (int64_t)take(in, 8) : v * 8;
}

static void cfi_call(run *r, input *in)
{
    unsigned op = (unsigned)take(in, 1), slot = op % N_CFI;
    jf_cfi *c = r->cfi[slot];
    op /= N_CFI;
    if (!c) {
        check_rc("jf_cfi_new", jf_cfi_new(&r->cfi[slot]));
        return;
    }
    size_t a = (size_t)take(in, 2), b = (size_t)take(in, 2);
    switch (op % 14) {
    case 0: check_rc("begin_fde", jf_cfi_begin_fde(c, a % 4096, b % 4096)); break;
    case 1: check_rc("advance_to", jf_cfi_advance_to(c, a % 4096)); break;
    case 2: check_rc("def_cfa", jf_cfi_def_cfa(c, take_reg(in), take_offset(in))); break;
    case 3: check_rc("def_cfa_offset", jf_cfi_def_cfa_offset(c, take_offset(in))); break;
    case 4: check_rc("def_cfa_register", jf_cfi_def_cfa_register(c, take_reg(in))); break;
    case 5: check_rc("offset", jf_cfi_offset(c, take_reg(in), take_offset(in))); break;
    case 6: check_rc("restore", jf_cfi_restore(c, take_reg(in))); break;
    case 7: check_rc("same_value", jf_cfi_same_value(c, take_reg(in))); break;
    case 8: check_rc("remember_state", jf_cfi_remember_state(c)); break;
    case 9: check_rc("restore_state", jf_cfi_restore_state(c)); break;
    case 10: check_rc("add_frameless", jf_cfi_add_frameless(c, a % 4096, b % 4096, take_offset(in))); break;
    case 12: check_rc("val_offset", jf_cfi_val_offset(c, take_reg(in), take_offset(in))); break;
    case 11: {
        jf_standard_frame f = JF_STANDARD_FRAME_INIT;
        f.start = a % 64;
        f.after_push = f.start + take(in, 1) % 8;
        f.after_fp_set = f.after_push + take(in, 1) % 8;
        f.epilogue_start = take(in, 1) % 2 ? f.after_fp_set + take(in, 1) : 0;
        f.after_pop = take(in, 1) % 4 ? f.after_fp_set + take(in, 1) % 64 : 0;
        f.end = f.start + b % 512;
        check_rc("add_standard_frame", jf_cfi_add_standard_frame(c, &f));
        break;
    }
    default:
        jf_cfi_free(c);
        r->cfi[slot] = NULL;
        break;
    }
}

/* A name from the input: any bytes, sometimes empty or long. */
static const char *take_name(input *in, char *buf, size_t cap)
{
    size_t len = (size_t)take(in, 1);
    if (len == 255)
        len = cap - 1; /* a long one: the rest is zeros past the input's end */
    len = len < cap - 1 ? len : cap - 1;
    for (size_t i = 0; i < len; i++)
        buf[i] = (char)take(in, 1);
    buf[len] = '\0';
    return len || take(in, 1) % 2 ? buf : NULL;
}

typedef struct region_input {
    jf_region region;
    size_t room;
    jf_line lines[MAX_LINES];
    char name[300];
    char file[40];
} region_input;

/* Build a region at the next free place; 0 if code[] is full. */
static int take_region(run *r, input *in, region_input *ri)
{
    jf_region *g = &ri->region;
    *g = (jf_region)JF_REGION_INIT;
    g->size = (size_t)take(in, 2) % 2048;
    size_t which = (size_t)take(in, 1) % (N_CFI + 1);
    g->cfi = which < N_CFI ? r->cfi[which] : NULL; /* also NULL while that slot is empty */
    size_t room = jf_jitdump_footprint(g->size, g->cfi);
    if (room < g->size + JF_JITDUMP_NONCE_SIZE)
        room = g->size + JF_JITDUMP_NONCE_SIZE;
    room = (room + 15) & ~(size_t)15;
    if (r->next + room > FRESH_BYTES)
        return 0;
    g->addr = code + r->next;
    r->next += room;
    ri->room = room;
    g->name = take_name(in, ri->name, sizeof ri->name);
    unsigned flags = (unsigned)take(in, 1);
    if (flags & 1) {
        snprintf(ri->file, sizeof ri->file, "/src/f%u.c", flags >> 4);
        g->file = ri->file;
        g->line = (uint32_t)take(in, 2);
    }
    if (flags & 2) {
        g->n_lines = take(in, 1) % (MAX_LINES + 1);
        for (size_t k = 0; k < g->n_lines; k++) {
            ri->lines[k].offset = (size_t)take(in, 2) % (g->size + 2);
            ri->lines[k].line = (uint32_t)take(in, 2);
            ri->lines[k].file = take(in, 1) % 2 ? "/src/inc.h" : NULL;
        }
        g->lines = ri->lines;
    }
    if (flags & 4) /* an older or newer caller's struct */
        g->struct_size = take(in, 1) % 2 ? sizeof(jf_region) - sizeof(void *) : sizeof(jf_region) + 8;
    return 1;
}

static void note_live(run *r, const void *addr, size_t room)
{
    if (r->n_live < MAX_LIVE) {
        r->room[r->n_live] = room;
        r->live[r->n_live++] = addr;
    }
}

static void forget_live(run *r, size_t i)
{
    r->n_live--;
    r->live[i] = r->live[r->n_live];
    r->room[i] = r->room[r->n_live];
}

static void register_one(run *r, input *in)
{
    region_input ri;
    if (!take_region(r, in, &ri) || r->n_live == MAX_LIVE)
        return;
    /* A newer caller's bigger struct reads on into ri.lines: still our memory. */
    if (check_rc("jf_register", jf_register(&ri.region)) == 0)
        note_live(r, ri.region.addr, ri.room);
}

static void register_batch(run *r, input *in)
{
    static region_input ri[MAX_BATCH];
    jf_region batch[MAX_BATCH];
    size_t n = (size_t)take(in, 1) % (MAX_BATCH + 1);
    if (r->n_live + n > MAX_LIVE)
        return;
    for (size_t i = 0; i < n; i++) {
        if (!take_region(r, in, &ri[i]))
            return;
        ri[i].region.struct_size = sizeof(jf_region); /* one stride for the whole array */
        batch[i] = ri[i].region;
    }
    if (check_rc("jf_register_batch", jf_register_batch(batch, n)) == 0)
        for (size_t i = 0; i < n; i++)
            note_live(r, batch[i].addr, ri[i].room);
}

static void unregister_one(run *r, input *in)
{
    size_t pick = (size_t)take(in, 1);
    if (r->n_live && pick < 200) {
        pick %= r->n_live;
        if (check_rc("jf_unregister", jf_unregister(r->live[pick])) != 0)
            fail("unregistering a live region", -1);
        forget_live(r, pick);
        return;
    }
    const uint8_t *addr = code + take(in, 2);
    size_t i = 0;
    while (i < r->n_live && r->live[i] != addr)
        i++;
    int rc = check_rc("jf_unregister", jf_unregister(addr));
    if ((rc == 0) != (i < r->n_live))
        fail("jf_unregister of an arbitrary address disagrees with the live set", rc);
    if (rc == 0)
        forget_live(r, i);
}

/* A move's destination: a fresh slot of the region's size (never
 * refused), or anywhere in the move area (it may overlap: JF_EEXIST). */
static const uint8_t *take_destination(run *r, input *in, size_t pick)
{
    if (take(in, 1) % 4 == 0) {
        r->reused = 1; /* may land on a dead region's lines and mappings */
        return code + FRESH_BYTES + take(in, 2);
    }
    if (r->next + r->room[pick] > FRESH_BYTES)
        return r->live[pick]; /* code[] is full: stay (a no-op move) */
    const uint8_t *to = code + r->next;
    r->next += r->room[pick];
    return to;
}

/* Move up to four live regions in one batch (sometimes one region twice:
 * JF_EINVAL). A refused batch must leave every region where it was. */
static void move_regions(run *r, input *in)
{
    enum { MAX_MOVES = 4 };
    jf_region_move moves[MAX_MOVES];
    size_t picks[MAX_MOVES];
    size_t n = (size_t)take(in, 1) % MAX_MOVES + 1;
    if (!r->n_live)
        return;
    for (size_t i = 0; i < n; i++) {
        picks[i] = (size_t)take(in, 1) % r->n_live;
        moves[i] = (jf_region_move){r->live[picks[i]], take_destination(r, in, picks[i])};
    }
    int rc = check_rc("jf_move_batch",
                      n == 1 ? jf_move(moves[0].from, moves[0].to) : jf_move_batch(moves, n));
    for (size_t i = 0; rc == 0 && i < n; i++)
        r->live[picks[i]] = moves[i].to;
    for (size_t i = 0; i < r->n_live; i++) /* each is still where the harness says */
        if (jf_move(r->live[i], r->live[i]) != 0)
            fail("a live region is not where the last jf_move_batch left it", rc);
}

static long trampoline_target(long a, long b)
{
    return a + b;
}

static void create_trampoline(run *r, input *in)
{
    if (r->n_trampolines == MAX_TRAMPOLINES)
        return;
    region_input ri; /* for its name buffer */
    const char *name = take_name(in, ri.name, sizeof ri.name);
    jf_trampoline_options opts = JF_TRAMPOLINE_OPTIONS_INIT;
    unsigned flags = (unsigned)take(in, 1);
    opts.file = flags & 1 ? "/src/vm.lang" : NULL;
    opts.line = (uint32_t)take(in, 2);
    opts.align = flags & 2 ? (size_t)1 << (take(in, 1) % 8) : 0;
    jf_fn entry = NULL;
    r->packed |= !(jf_enabled_sinks() & JF_SINK_JITDUMP);
    int rc = jf_trampoline_create((jf_fn)trampoline_target, name, flags & 4 ? &opts : NULL, &entry);
    if (check_rc("jf_trampoline_create", rc) != 0)
        return;
    if (((long (*)(long, long))entry)(40, 2) != 42)
        fail("a trampoline does not forward to its target", 0);
    r->trampolines[r->n_trampolines++] = entry;
    r->reused |= r->destroyed;
}

static void destroy_trampoline(run *r, size_t pick)
{
    if (!r->n_trampolines)
        return;
    pick %= r->n_trampolines;
    if (check_rc("jf_trampoline_destroy", jf_trampoline_destroy(r->trampolines[pick])) != 0)
        fail("destroying a live trampoline", -1);
    r->trampolines[pick] = r->trampolines[--r->n_trampolines];
    r->destroyed = 1;
}

static void check_symfiles(void)
{
    for (jf__jit_code_entry *e = __jit_debug_descriptor.first_entry; e; e = e->next_entry) {
        jft_error err = {0};
        if (elf_check((const uint8_t *)e->symfile_addr, e->symfile_size, NULL, &err) != 0) {
            fprintf(stderr, "fuzz_api: symfile at %p: %s (at %llu)\n", (const void *)e->symfile_addr, err.msg,
                    (unsigned long long)err.where);
            abort();
        }
    }
}

static void check_live_count(const run *r)
{
    struct jf_stats s = JF_STATS_INIT;
    if (jf_stats(&s) != 0 || s.live_regions != r->n_live + r->n_trampolines) {
        fprintf(stderr, "fuzz_api: jf_stats says %llu live regions, the harness %zu\n",
                (unsigned long long)s.live_regions, r->n_live + r->n_trampolines);
        abort();
    }
}

/* Read a whole file; NULL if absent. */
static uint8_t *slurp(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return NULL;
    uint8_t *buf = NULL;
    if (fstat(fd, &st) == 0 && (buf = malloc((size_t)st.st_size + 1)) != NULL)
        *len = (size_t)pread(fd, buf, (size_t)st.st_size, 0);
    close(fd);
    return buf;
}

/* Overlapping entries are allowed only where they are expected:
 * - trampolines made while jitdump was off stay packed; when jitdump is
 *   enabled later, their replayed records clash (jf_jitdump_overlaps() counts
 *   only clashes between consecutive records, and a replay runs in table
 *   order, so not every clash is counted: the header says "enable jitdump
 *   before creating trampolines");
 * - space reused after a trampoline was destroyed: neither file can say
 *   "gone", so a checker sees the dead copy's line, or its jitdump mapping
 *   with unwind data, as live and clashing with the new copy next to it. */
static void check_file(const char *path, int jitdump, int overlaps_expected)
{
    size_t len = 0;
    uint8_t *buf = slurp(path, &len);
    if (!buf)
        return;
    jft_error err = {0};
    int rc = jitdump ? jd_check(buf, len, NULL, &err) : pm_check(buf, len, NULL, &err);
    free(buf);
    if (rc != 0 && overlaps_expected && strstr(err.msg, "overlap"))
        rc = 0;
    if (rc != 0) {
        fprintf(stderr, "fuzz_api: %s: %s (at %llu)\n", path, err.msg, (unsigned long long)err.where);
        abort();
    }
    unlink(path);
}

static _Unwind_Reason_Code count_frame(struct _Unwind_Context *ctx, void *n)
{
    (void)ctx;
    ++*(int *)n;
    return _URC_NO_REASON;
}

static void remove_dump_dir(void)
{
    rmdir(dump_dir); /* each input's dump is checked and removed */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int dir_made;
    if (!dir_made) {
        if (!mkdtemp(dump_dir))
            abort();
        dir_made = 1;
        atexit(remove_dump_dir);
    }
    input in = {data, size};
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    cfg.sinks = (unsigned)take(&in, 1) & JF_SINK_ALL;
    cfg.dump_dir = dump_dir;
    if (jf_init(&cfg) != 0)
        fail("jf_init", -1);
    run r = {0};
    r.overlaps_before = jf_jitdump_overlaps();
    for (int steps = 0; in.n && steps < 200; steps++) {
        switch (take(&in, 1) % 11) {
        case 10: move_regions(&r, &in); break;
        case 8: create_trampoline(&r, &in); break;
        case 9: destroy_trampoline(&r, (size_t)take(&in, 1)); break;
        case 0:
        case 1:
        case 2: cfi_call(&r, &in); break;
        case 3: register_one(&r, &in); break;
        case 4: register_batch(&r, &in); break;
        case 5: unregister_one(&r, &in); break;
        case 6: check_rc("jf_enable", jf_enable((unsigned)take(&in, 1) & JF_SINK_ALL)); break;
        default: check_rc("jf_disable", jf_disable((unsigned)take(&in, 1) & JF_SINK_ALL)); break;
        }
    }
    check_live_count(&r);
    check_symfiles();
    int frames = 0;
    _Unwind_Backtrace(count_frame, &frames);
    char path[96];
    snprintf(path, sizeof path, "/tmp/perf-%ld.map", (long)getpid());
    check_file(path, 0, r.reused);
    while (r.n_trampolines) /* their copies go back to the arenas for the next input */
        destroy_trampoline(&r, 0);
    int overlaps_expected = jf_jitdump_overlaps() != r.overlaps_before || r.packed || r.reused;
    if (jf_shutdown() != 0)
        fail("jf_shutdown", -1);
    snprintf(path, sizeof path, "%s/jit-%ld.dump", dump_dir, (long)getpid());
    check_file(path, 1, overlaps_expected);
    for (int i = 0; i < N_CFI; i++)
        jf_cfi_free(r.cfi[i]);
    return 0;
}
