/*
 * Trampolines with the jitdump sink: copies made while jitdump is enabled
 * are spaced by jf_jitdump_footprint, so perf's synthesized mappings (code,
 * nonce, unwind data) never overlap and jf_jitdump_overlaps() stays 0; the
 * dump passes `jitframes check` (when the tool path is given).
 * Negative control (in a forked child, with its own dump): regions packed as
 * closely as copies are without jitdump do overlap, and are counted.
 * Record layout (also run under qemu for aarch64 and riscv64): each
 * CODE_LOAD's code_size is the code plus the 8-byte nonce; where a 4-byte
 * unaligned store is not one instruction (riscv64), up to 3 more bytes make
 * every record start 4-aligned, so the store that publishes a group is one
 * aligned store.
 * Usage: test_trampoline_jitdump [JITFRAMES_TOOL]
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jitframes.h"

enum { COUNT = 300 };

static const char *tool;
static char dump_dir[] = "/tmp/jf-tramp-jitdump-XXXXXX";

__attribute__((noinline)) static long add3(long a, long b, long c)
{
    return a + b + c;
}

static void create_many(jf_fn *entries, const char *prefix)
{
    char name[32];
    for (int i = 0; i < COUNT; i++) {
        snprintf(name, sizeof name, "%s_%d", prefix, i);
        assert_int_equal(jf_trampoline_create((jf_fn)add3, name, NULL, &entries[i]), 0);
        assert_int_equal(((long (*)(long, long, long))entries[i])(i, 1, 2), i + 3);
    }
}

static int init_sinks(unsigned sinks)
{
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    cfg.sinks = sinks;
    cfg.dump_dir = dump_dir;
    return jf_init(&cfg);
}

static void init_with(unsigned sinks)
{
    assert_int_equal(init_sinks(sinks), 0);
}

/* Run `jitframes check` on every dump of this process in dump_dir. */
static void check_dumps(pid_t pid)
{
    if (!tool)
        return;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "'%s' check '%s/jit-%d.dump'", tool, dump_dir, (int)pid);
    assert_int_equal(system(cmd), 0);
}

static void trampolines_made_with_jitdump_never_overlap(void **state)
{
    (void)state;
    static jf_fn entries[COUNT];
    init_with(JF_SINK_JITDUMP | JF_SINK_PERFMAP);
    uint64_t before = jf_jitdump_overlaps();
    create_many(entries, "spaced");
    assert_int_equal(jf_jitdump_overlaps(), before);
    size_t room = jf_jitdump_footprint(16, NULL);
    assert_true((uintptr_t)entries[1] - (uintptr_t)entries[0] >= room);
    for (int i = 0; i < COUNT; i++)
        assert_int_equal(jf_trampoline_destroy(entries[i]), 0);
    assert_int_equal(jf_shutdown(), 0);
    char map[64]; /* not left for a later process with our pid */
    snprintf(map, sizeof map, "/tmp/perf-%ld.map", (long)getpid());
    unlink(map);
    check_dumps(getpid());
}

/* Child (own pid, own dump): 16-byte regions packed 16 bytes apart, as
 * trampoline copies are without jitdump, written from the highest address
 * down: each one's synthesized mapping cuts into the one written before. */
static int packed_regions_overlap(void)
{
    static uint8_t code[COUNT * 16];
    if (init_sinks(JF_SINK_JITDUMP) != 0)
        return 10;
    uint64_t before = jf_jitdump_overlaps();
    for (int i = COUNT - 1; i >= 0; i--) {
        jf_region r = JF_REGION_INIT;
        r.addr = code + 16 * i;
        r.size = 16;
        r.name = "packed";
        if (jf_register(&r) != 0)
            return 11;
    }
    return jf_jitdump_overlaps() >= before + COUNT - 1 ? 0 : 12;
}

/* Run body in a forked child (its own pid, so its own dump): it must exit 0. */
static void run_in_child(int (*body)(void))
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(body());
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

static void negative_control_packed_copies_overlap(void **state)
{
    (void)state;
    run_in_child(packed_regions_overlap);
}

/* A u32 or u64 of the dump, which is in the host's byte order (s390x: big-endian). */
static uint32_t host32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static uint64_t host64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* Child: regions of every size and name length mod 4, then the dump's
 * records walked from the file header. 0 if the layout is as described. */
static int write_and_walk_records(void)
{
    static uint8_t code[64];
    if (init_sinks(JF_SINK_JITDUMP) != 0)
        return 10;
    static const char *const names[] = {"a", "ab", "abc", "abcd"};
    for (int i = 0; i < 16; i++) {
        jf_region r = JF_REGION_INIT;
        r.addr = code + i;
        r.size = 1 + (size_t)i % 4;
        r.name = names[i / 4];
        if (jf_register(&r) != 0 || jf_unregister(r.addr) != 0)
            return 11;
    }
    if (jf_shutdown() != 0)
        return 12;
    char path[512];
    snprintf(path, sizeof path, "%s/jit-%d.dump", dump_dir, (int)getpid());
    FILE *f = fopen(path, "rb");
    static uint8_t file[1 << 16];
    size_t len = f ? fread(file, 1, sizeof file, f) : 0;
    if (f)
        fclose(f);
#if defined(__x86_64__) || defined(__aarch64__)
    const size_t pad_max = 0;
#else
    const size_t pad_max = 3;
#endif
    int loads = 0;
    for (size_t at = host32(file + 8); at + 16 <= len; at += host32(file + at + 4)) {
        uint32_t id = host32(file + at), size = host32(file + at + 4);
        if (size < 16 || (pad_max && at % 4 != 0))
            return 13;
        if (id == 0) { /* CODE_LOAD: code_size at +40, the name from +56 */
            uint64_t code_size = host64(file + at + 40);
            size_t real = 1 + (size_t)loads % 4; /* registered in this order */
            if (code_size < real + 8 || code_size > real + 8 + pad_max ||
                code_size != size - 56 - strlen((const char *)file + at + 56) - 1)
                return 14;
            loads++;
        }
    }
    return loads == 16 ? 0 : 15;
}

static void records_carry_the_nonce_and_start_aligned_where_needed(void **state)
{
    (void)state;
    run_in_child(write_and_walk_records);
}

static int remove_dump_dir(void **state)
{
    (void)state;
    DIR *d = opendir(dump_dir);
    struct dirent *e;
    char path[512];
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.' &&
            snprintf(path, sizeof path, "%s/%s", dump_dir, e->d_name) < (int)sizeof path)
            unlink(path);
    if (d)
        closedir(d);
    rmdir(dump_dir);
    return 0;
}

int main(int argc, char **argv)
{
    tool = argc > 1 ? argv[1] : NULL;
    if (!mkdtemp(dump_dir)) {
        perror("mkdtemp");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(trampolines_made_with_jitdump_never_overlap),
        cmocka_unit_test(negative_control_packed_copies_overlap),
        cmocka_unit_test(records_carry_the_nonce_and_start_aligned_where_needed),
    };
    return cmocka_run_group_tests(tests, NULL, remove_dump_dir);
}
