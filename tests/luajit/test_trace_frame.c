/* trace_frame.c on synthetic trace code of both backends: where the stack
 * adjustment changes (root head, side-trace growth, tail release), with
 * every encoding of the adjustment, and the approximation when an
 * instruction is not where expected. The gdb tests (gdb_walk_traces.py, on
 * x86_64 and under qemu-aarch64) check the same rules on real traces. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "trace_frame.h"

enum { CFRAME = 96, ARM_BASE = 224 };

/* Code pieces. x64: "a-16" is `add rsp, -16` (imm8), "A-512" the imm32
 * form. arm64 (little-endian words): "sub16" is `sub sp, sp, #16`,
 * "sub4096" `sub sp, sp, #1, lsl #12`. */
typedef struct piece {
    const char *name;
    uint8_t bytes[8];
    size_t size;
} piece;

static const piece pieces[] = {
    {"a-16", {0x48, 0x83, 0xc4, 0xf0}, 4},
    {"a-32", {0x48, 0x83, 0xc4, 0xe0}, 4},
    {"a+16", {0x48, 0x83, 0xc4, 0x10}, 4},
    {"a+48", {0x48, 0x83, 0xc4, 0x30}, 4},
    {"A-512", {0x48, 0x81, 0xc4, 0x00, 0xfe, 0xff, 0xff}, 7},
    {"A+512", {0x48, 0x81, 0xc4, 0x00, 0x02, 0x00, 0x00}, 7},
    {"jmp", {0xe9, 0x10, 0x20, 0x30, 0x40}, 5},
    {"body", {0x8b, 0x45, 0x08, 0x90, 0x90, 0x90, 0x90, 0x90}, 8}, /* mov, nops */
    {"loop", {0xeb, 0xf0}, 2},                                     /* jmp short back */
    {"sub16", {0xff, 0x43, 0x00, 0xd1}, 4},
    {"sub32", {0xff, 0x83, 0x00, 0xd1}, 4},
    {"sub4096", {0xff, 0x07, 0x40, 0xd1}, 4},
    {"add16", {0xff, 0x43, 0x00, 0x91}, 4},
    {"add32", {0xff, 0x83, 0x00, 0x91}, 4},
    {"add48", {0xff, 0xc3, 0x00, 0x91}, 4},
    {"add4112", {0xff, 0x43, 0x40, 0x91}, 4}, /* wrong: 4096 + 16 is not one add */
    {"add4096", {0xff, 0x07, 0x40, 0x91}, 4},
    {"b", {0x10, 0x00, 0x00, 0x14}, 4},
    {"ldr_x30", {0x1e, 0x02, 0x40, 0xf9}, 4}, /* ldr x30, [x16] */
    {"br_x30", {0xc0, 0x03, 0x1f, 0xd6}, 4},
    {"mov", {0xe0, 0x03, 0x01, 0xaa}, 4},   /* mov x0, x1 */
    {"bloop", {0xff, 0xff, 0xff, 0x54}, 4}, /* b.nv back: not a final b */
};

/* One case: the code, the parent's adjustment, what must be read, and the
 * CFA offset expected at some byte offsets (negative: from the end). */
typedef struct frame_case {
    const trace_isa *isa;
    const char *name;
    const char *code[6];
    int64_t parent;
    uint32_t spadjust;
    int exact;
    struct {
        int offset; /* < 0: from the end */
        uint32_t cfa;
    } at[5];
} frame_case;

static const frame_case cases[] = {
    {&trace_isa_x64,
     "root with a tail",
     {"a-16", "body", "a+16", "jmp"},
     TRACE_ROOT,
     16,
     1,
     {{0, CFRAME}, {4, CFRAME + 16}, {-9, CFRAME + 16}, {-5, CFRAME}, {-1, CFRAME}}},
    {&trace_isa_x64,
     "root that loops",
     {"A-512", "body", "loop"},
     TRACE_ROOT,
     512,
     1,
     {{6, CFRAME}, {7, CFRAME + 512}, {-1, CFRAME + 512}}},
    {&trace_isa_x64,
     "root without adjustment",
     {"body", "jmp"},
     TRACE_ROOT,
     0,
     1,
     {{0, CFRAME}, {8, CFRAME}, {-1, CFRAME}}},
    {&trace_isa_x64,
     "side inheriting its parent's",
     {"body", "a+16", "jmp"},
     16,
     16,
     1,
     {{0, CFRAME + 16}, {-6, CFRAME + 16}, {-5, CFRAME}}},
    {&trace_isa_x64,
     "side growing the frame",
     {"body", "a-32", "body", "a+48", "jmp"},
     16,
     48,
     1,
     {{0, CFRAME + 16}, {8, CFRAME + 16}, {12, CFRAME + 48}, {-6, CFRAME + 48}, {-5, CFRAME}}},
    {&trace_isa_x64,
     "side with imm32 forms",
     {"A-512", "body", "A+512", "jmp"},
     0,
     512,
     1,
     {{0, CFRAME}, {7, CFRAME + 512}, {-5, CFRAME}}},
    /* no `add rsp, -32` although the tail gives back 48: LuaJIT GDBJIT's rule */
    {&trace_isa_x64,
     "missing growth",
     {"body", "a+48", "jmp"},
     16,
     48,
     0,
     {{0, CFRAME + 48}, {-5, CFRAME + 48}, {-1, CFRAME + 48}}},
    {&trace_isa_x64,
     "unknown parent",
     {"body", "a+16", "jmp"},
     TRACE_PARENT_UNKNOWN,
     16,
     0,
     {{0, CFRAME + 16}, {-1, CFRAME + 16}}},
    /* arm64: BC_JLOOP's 16 bytes are in the base; a tail back to the
     * interpreter gives them back too, one to a trace does not. */
    {&trace_isa_arm64,
     "arm64 root to the interpreter",
     {"sub32", "mov", "add48", "b"},
     TRACE_ROOT,
     32,
     1,
     {{0, ARM_BASE}, {4, ARM_BASE + 32}, {8, ARM_BASE + 32}, {12, ARM_BASE - 16}}},
    {&trace_isa_arm64,
     "arm64 root linking to a trace",
     {"sub32", "mov", "add32", "b"},
     TRACE_ROOT,
     32,
     1,
     {{4, ARM_BASE + 32}, {12, ARM_BASE}}},
    {&trace_isa_arm64,
     "arm64 root that loops",
     {"sub4096", "mov", "bloop"},
     TRACE_ROOT,
     4096,
     1,
     {{0, ARM_BASE}, {4, ARM_BASE + 4096}, {-4, ARM_BASE + 4096}}},
    {&trace_isa_arm64,
     "arm64 root without adjustment, far exit",
     {"mov", "add16", "ldr_x30", "br_x30"},
     TRACE_ROOT,
     0,
     1,
     {{0, ARM_BASE}, {4, ARM_BASE}, {8, ARM_BASE - 16}, {12, ARM_BASE - 16}}},
    {&trace_isa_arm64,
     "arm64 side growing its parent's",
     {"mov", "sub16", "mov", "add48", "b"},
     32,
     48,
     1,
     {{0, ARM_BASE + 32}, {4, ARM_BASE + 32}, {8, ARM_BASE + 48}, {16, ARM_BASE}}},
    {&trace_isa_arm64,
     "arm64 side to the interpreter",
     {"mov", "add48", "b"},
     32,
     32,
     1,
     {{0, ARM_BASE + 32}, {8, ARM_BASE - 16}}},
    {&trace_isa_arm64,
     "arm64 side, release unexplained",
     {"mov", "add4112", "b"},
     0,
     0,
     0,
     {{0, ARM_BASE}, {8, ARM_BASE}}},
};

typedef struct trace_code {
    uint8_t bytes[256];
    size_t size;
} trace_code;

static void assemble(const frame_case *c, trace_code *out)
{
    out->size = 0;
    for (size_t i = 0; i < 6 && c->code[i]; i++)
        for (size_t k = 0; k < sizeof pieces / sizeof pieces[0]; k++)
            if (strcmp(pieces[k].name, c->code[i]) == 0) {
                memcpy(out->bytes + out->size, pieces[k].bytes, pieces[k].size);
                out->size += pieces[k].size;
            }
}

static void reads_every_case(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const frame_case *c = &cases[i];
        trace_code code;
        assemble(c, &code);
        trace_frame f;
        trace_frame_read(c->isa, code.bytes, code.size, c->parent, &f);
        print_message("%s\n", c->name);
        assert_int_equal(f.spadjust, c->spadjust);
        assert_int_equal(f.exact, c->exact);
        for (size_t k = 0; k < 5 && c->at[k].cfa; k++) {
            int off = c->at[k].offset;
            size_t offset = off < 0 ? code.size - (size_t)-off : (size_t)off;
            assert_int_equal(trace_frame_cfa_offset(&f, offset), c->at[k].cfa);
        }
    }
}

/* Every case of the host's backend gives valid unwind rules; the other
 * backend's are refused (a jf_cfi describes the host only). */
static void unwind_rules_build(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        trace_code code;
        assemble(&cases[i], &code);
        trace_frame f;
        trace_frame_read(cases[i].isa, code.bytes, code.size, cases[i].parent, &f);
        jf_cfi *cfi = NULL;
        int rc = trace_frame_cfi(&f, code.size, &cfi);
        if (cases[i].isa != trace_isa_host()) {
            assert_int_equal(rc, JF_ENOTSUP);
            continue;
        }
        assert_int_equal(rc, 0);
        assert_true(jf_jitdump_footprint(code.size, cfi) > jf_jitdump_footprint(code.size, NULL));
        jf_cfi_free(cfi);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_every_case),
        cmocka_unit_test(unwind_rules_build),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
