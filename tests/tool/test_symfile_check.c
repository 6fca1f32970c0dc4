/*
 * `jitframes check` on GDB JIT symfiles: the symfile the library's gdb sink
 * builds passes, in the byte order it is written in (EI_DATA, and every
 * field); copies of it damaged one rule at a time fail with the right
 * message. Built twice: against the library and against its foreign-order
 * variant (big-endian symfiles on a little-endian machine).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "elf_reader.h"
#include "jitframes.h"

#include "gdb_jit_view.h"
#include "written_order.h"

static uint8_t *code; /* stands in for JIT code, mapped like it */
static uint8_t *symfile;
static size_t symfile_size;

/* Where things are in the pristine symfile. */
static struct {
    size_t text, eh_frame, symtab, strtab; /* section indices */
    uint64_t eh_frame_offset, symtab_offset;
} S;

static void note_section(void *ctx, size_t index, const elf_section *s)
{
    (void)ctx;
    if (strcmp(s->name, ".text") == 0 && !S.text)
        S.text = index;
    if (strcmp(s->name, ".eh_frame") == 0) {
        S.eh_frame = index;
        S.eh_frame_offset = s->offset;
    }
    if (strcmp(s->name, ".symtab") == 0) {
        S.symtab = index;
        S.symtab_offset = s->offset;
    }
    if (strcmp(s->name, ".strtab") == 0)
        S.strtab = index;
}

static int setup(void **state)
{
    (void)state;
    code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code == MAP_FAILED)
        return -1;
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    cfg.sinks = JF_SINK_GDB;
    if (jf_init(&cfg)) {
        print_error("jf_init: %s\n", jf_last_error());
        return -1;
    }
    jf_cfi *cfi;
    if (jf_cfi_new(&cfi) || jf_cfi_add_frameless(cfi, 0, 64, 16))
        return -1;
    static const char *const names[] = {"sym_a", "sym_b", "sym_c"};
    jf_region batch[3];
    for (int i = 0; i < 3; i++) {
        jf_region r = JF_REGION_INIT;
        r.addr = code + 128 * i;
        r.size = 64;
        r.name = names[i];
        r.cfi = cfi;
        batch[i] = r;
    }
    if (jf_register_batch(batch, 3)) {
        print_error("register: %s\n", jf_last_error());
        return -1;
    }
    jf_cfi_free(cfi);
    const jf__jit_code_entry *e = __jit_debug_descriptor.first_entry;
    if (!e)
        return -1;
    symfile_size = e->symfile_size;
    symfile = malloc(symfile_size);
    if (!symfile)
        return -1;
    memcpy(symfile, e->symfile_addr, symfile_size);
    jf_shutdown();
    elf_visitor v = {NULL, note_section, NULL, NULL};
    jft_error err = {0};
    if (elf_walk(symfile, symfile_size, &v, NULL, 1, NULL, &err) != 0 || !S.text || !S.eh_frame ||
        !S.symtab) {
        print_error("symfile: %s (text %zu, eh_frame %zu, symtab %zu)\n", err.msg, S.text, S.eh_frame,
                    S.symtab);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free(symfile);
    munmap(code, 4096);
    return 0;
}

static void library_symfile_passes_check(void **state)
{
    (void)state;
    jft_error err = {0};
    elf_summary s;
    assert_int_equal(symfile[5], WRITTEN_BIG_ENDIAN ? 2 : 1); /* ELFDATA2MSB : ELFDATA2LSB */
    int rc = elf_check(symfile, symfile_size, &s, &err);
    if (rc)
        print_error("0x%llx: %s\n", (unsigned long long)err.where, err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(s.functions, 3);
    assert_int_equal(s.fdes, 3);
}

/* Fields in the symfile's byte order. */
static void put_uint(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[WRITTEN_BIG_ENDIAN ? n - 1 - i : i] = (uint8_t)(v >> (8 * i));
}

static void put_u64(uint8_t *p, uint64_t v)
{
    put_uint(p, v, 8);
}

static void put_u16(uint8_t *p, uint16_t v)
{
    put_uint(p, v, 2);
}

static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[WRITTEN_BIG_ENDIAN ? i : 7 - i];
    return v;
}

/* Section header field of section k. */
static uint8_t *shdr(uint8_t *f, size_t k, size_t field)
{
    return f + get_u64(f + 40) + k * 64 + field;
}

typedef struct damage {
    const char *name;
    int what;
    const char *message;
} damage;

enum {
    ALLOC_AT_ZERO,
    SIZE_ZERO,
    NOT_EXEC,
    TEXT_MOVED,
    PAST_END,
    CLASS_32,
    OVERLAP,
    CIE_VERSION,
    SECOND_SYMTAB,
    NOT_ELF
};

static const damage damages[] = {
    {"alloc_at_zero", ALLOC_AT_ZERO, "SHF_ALLOC section .eh_frame at address 0"},
    {"size_zero", SIZE_ZERO, "FUNC symbol sym_a has size 0"},
    {"not_exec", NOT_EXEC, "is in non-executable section .symtab"},
    {"text_moved", TEXT_MOVED, "which no FUNC symbol contains"},
    {"past_end", PAST_END, "runs past the end of the file"},
    {"class_32", CLASS_32, "only 64-bit symfiles are supported"},
    {"overlap", OVERLAP, "FUNC symbols sym_a"},
    {"cie_version", CIE_VERSION, ".eh_frame: CIE version 2"},
    {"second_symtab", SECOND_SYMTAB, "is a second symbol table (ELF allows one)"},
    {"not_elf", NOT_ELF, "not an ELF file"},
};

static void apply(uint8_t *f, int what)
{
    uint8_t *sym1 = f + S.symtab_offset + 24, *sym2 = f + S.symtab_offset + 48;
    switch (what) {
    case ALLOC_AT_ZERO: put_u64(shdr(f, S.eh_frame, 16), 0); break;
    case SIZE_ZERO: put_u64(sym1 + 16, 0); break;
    case NOT_EXEC: put_u16(sym1 + 6, (uint16_t)S.symtab); break;
    case TEXT_MOVED: put_u64(shdr(f, S.text, 16), get_u64(shdr(f, S.text, 16)) + 0x100000); break;
    case PAST_END: put_u64(shdr(f, S.strtab, 24), symfile_size); break;
    case CLASS_32: f[4] = 1; break;
    case OVERLAP: /* sym_b moved into sym_a */
        memcpy(sym2 + 6, sym1 + 6, 2);
        put_u64(sym2 + 8, get_u64(sym1 + 8) + 8);
        put_u64(sym2 + 16, 8);
        break;
    case CIE_VERSION: f[S.eh_frame_offset + 8] = 2; break;
    case SECOND_SYMTAB: memcpy(shdr(f, S.eh_frame, 0), shdr(f, S.symtab, 0), 64); break;
    default: f[1] = 'X'; break;
    }
}

static void damaged_symfiles_fail_check(void **state)
{
    (void)state;
    uint8_t *copy = malloc(symfile_size);
    assert_non_null(copy);
    for (size_t i = 0; i < sizeof damages / sizeof damages[0]; i++) {
        memcpy(copy, symfile, symfile_size);
        apply(copy, damages[i].what);
        jft_error err = {0};
        int rc = elf_check(copy, symfile_size, NULL, &err);
        if (rc != -1 || !strstr(err.msg, damages[i].message)) {
            print_error("%s: rc %d at 0x%llx: \"%s\"; expected \"%s\"\n", damages[i].name, rc,
                        (unsigned long long)err.where, err.msg, damages[i].message);
            fail();
        }
    }
    free(copy);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(library_symfile_passes_check),
        cmocka_unit_test(damaged_symfiles_fail_check),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
