/*
 * The DWARF CFI assembler. Runtimes describe how to unwind their code with
 * calls mirroring the assembler's .cfi_* directives; this file encodes them
 * as DWARF call frame instructions and emits .eh_frame + .eh_frame_hdr
 * images, either for perf's synthesized DSO (pc-relative fields computed for
 * the layout perf gives them, docs/formats.md) or for use in place.
 *
 * Representation: a jf_cfi carries its CIE parameters and one byte buffer,
 * `ops`, holding the encoded CIE record first and then each FDE's
 * instructions as one contiguous slice. Builder calls append instructions
 * already encoded, so emitting an image only copies bytes and fills in
 * addresses. Architecture specifics live in src/arch/cfi_arch.c only.
 */
#include "cfi.h"

#include "arch/host.h"
#include "byte_writer.h"
#include "dwarf_cfa.h"
#include "error.h"
#include "sys.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The highest DWARF register the psABIs give a general, floating-point or
 * vector register (x86_64 k7 is 125, aarch64 z31 and riscv64 v31 are 127,
 * ppc64le v31 108 with LR 65, s390x v31 83; RISC-V CSRs, 4096 and up, and
 * ppc64's special registers above 127 are not for CFI). The tool's decoder has the same bound. */
#define CFI_REG_MAX 127u
/* remember_state nesting: real code needs two or three levels; the tool's
 * decoder keeps a fixed stack of 16, as some unwinders do. */
#define CFI_MAX_STATE_DEPTH 16u
#define CFI_RECORD_ALIGN 4u /* CIE/FDE sizes: 4 suffices for every reader, keeps images small */
#define EH_FRAME_HDR_FIXED 12u
#define EH_FRAME_HDR_ROW 8u
#define NO_FDE SIZE_MAX

typedef struct cfi_fde {
    size_t start, end;       /* region offsets */
    size_t ops_off, ops_len; /* slice of jf_cfi.ops */
} cfi_fde;

struct jf_cfi {
    const jf__cfi_arch_facts *arch; /* NULL for descriptions built from raw bytes */
    uint32_t code_align;
    int32_t data_align;
    uint32_t ra_reg;
    size_t cie_len;     /* ops[0, cie_len): the encoded CIE record */
    size_t cie_enc_off; /* offset of the CIE's FDE pointer encoding byte */
    uint8_t *ops;
    size_t ops_len, ops_cap;
    cfi_fde *fdes; /* sorted by start, never overlapping */
    size_t n_fdes, fdes_cap;
    int one_block; /* a clone: ops and fdes live in this allocation */
    /* Shared (see jf__cfi_share): immutable, clones take a reference instead
     * of copying, and the last jf__cfi_free frees it. `shared` is set before
     * the description is published and never changes; only the count is
     * touched concurrently, always atomically. */
    int shared;
    size_t shared_refs;
    /* Builder state. */
    size_t cur;         /* index of the open FDE, NO_FDE if none */
    size_t loc;         /* region offset the next rules take effect at */
    unsigned depth;     /* remember_state nesting in the open FDE */
    const char *failed; /* first builder call that failed, NULL if none */
};

/* ------------------------------------------------------------------------ */
/* Architectures                                                            */
/* ------------------------------------------------------------------------ */

int jf__cfi_host_arch(void)
{
    return JF_HOST_CFI_ARCH;
}

/* ------------------------------------------------------------------------ */
/* Construction                                                             */
/* ------------------------------------------------------------------------ */

/* Room for n more bytes in ops. */
static int ops_reserve(struct jf_cfi *c, size_t n)
{
    if (n <= c->ops_cap - c->ops_len)
        return 0;
    size_t cap = c->ops_cap ? c->ops_cap : 32;
    while (cap - c->ops_len < n) {
        if (cap > SIZE_MAX / 2)
            return jf__fail(JF_ENOMEM, "unwind description too large");
        cap *= 2;
    }
    uint8_t *ops = realloc(c->ops, cap);
    if (!ops)
        return jf__fail(JF_ENOMEM, "out of memory growing an unwind description");
    c->ops = ops;
    c->ops_cap = cap;
    return 0;
}

static int ops_append(struct jf_cfi *c, const uint8_t *bytes, size_t n)
{
    if (n == 0)
        return 0;
    int rc = ops_reserve(c, n);
    if (rc)
        return rc;
    memcpy(c->ops + c->ops_len, bytes, n);
    c->ops_len += n;
    return 0;
}

/* Pad a record with DW_CFA_nop to the record alignment, then fill in its length. */
static void finish_record(jf__writer *w, size_t at)
{
    jf__put_align(w, CFI_RECORD_ALIGN);
    jf__patch_u32(w, at, (uint32_t)(w->pos - at - 4));
}

/* The whole CIE record: version 1 (the return address column, at most
 * CFI_REG_MAX, fits its byte), augmentation "zR", FDE pointers pcrel|sdata4.
 * Returns the offset of its pointer-encoding byte, which emission rewrites
 * for the absolute layout. */
_Static_assert(CFI_REG_MAX <= UINT8_MAX, "a version 1 CIE holds the return address column in a byte");
static size_t put_cie(jf__writer *w, const struct jf_cfi *c, const uint8_t *insns, size_t len)
{
    size_t at = w->pos;
    jf__put_u32(w, 0);
    jf__put_u32(w, 0); /* CIE id in .eh_frame */
    jf__put_u8(w, 1);
    jf__put_cstr(w, "zR");
    jf__put_uleb128(w, c->code_align);
    jf__put_sleb128(w, c->data_align);
    jf__put_u8(w, (uint8_t)c->ra_reg);
    jf__put_uleb128(w, 1);
    size_t enc_off = w->pos - at;
    jf__put_u8(w, DW_EH_PE_pcrel | DW_EH_PE_sdata4);
    jf__put_bytes(w, insns, len);
    finish_record(w, at);
    return enc_off;
}

/* A description with no FDE; its CIE record is encoded once, here, as the
 * first bytes of ops (emission copies it). */
static struct jf_cfi *cfi_alloc(uint32_t code_align, int32_t data_align, uint32_t ra_reg,
                                const uint8_t *cie_insns, size_t cie_insns_len)
{
    struct jf_cfi *c = calloc(1, sizeof *c);
    if (!c) {
        jf__fail(JF_ENOMEM, "out of memory allocating an unwind description");
        return NULL;
    }
    c->code_align = code_align;
    c->data_align = data_align;
    c->ra_reg = ra_reg;
    c->cur = NO_FDE;
    jf__writer w;
    jf__writer_init(&w, NULL, 0);
    put_cie(&w, c, cie_insns, cie_insns_len);
    if (ops_reserve(c, w.pos) != 0) {
        free(c);
        return NULL;
    }
    c->cie_len = c->ops_len = w.pos;
    jf__writer_init(&w, c->ops, c->cie_len);
    c->cie_enc_off = put_cie(&w, c, cie_insns, cie_insns_len);
    return c;
}

int jf__cfi_new_arch(jf__cfi_arch arch, struct jf_cfi **out)
{
    if (!out)
        return jf__fail(JF_EINVAL, "jf_cfi_new: out is NULL");
    *out = NULL;
    if ((unsigned)arch >= JF_CFI_ARCH_COUNT)
        return jf__fail(JF_ENOTSUP, "unwind descriptions: unknown architecture %d", (int)arch);
    const jf__cfi_arch_facts *a = &jf__cfi_arches[arch];
    struct jf_cfi *c = cfi_alloc(a->code_align, a->data_align, a->ra, a->cie_insns, a->cie_insns_len);
    if (!c)
        return JF_ENOMEM;
    c->arch = a;
    *out = c;
    return 0;
}

int jf_cfi_new(jf_cfi **out)
{
    jf__clear_error();
    int arch = jf__cfi_host_arch();
    if (arch < 0) {
        if (out)
            *out = NULL;
        return jf__fail(JF_ENOTSUP, "unwind descriptions are not supported on this architecture");
    }
    return jf__cfi_new_arch((jf__cfi_arch)arch, out);
}

void jf__cfi_free(struct jf_cfi *cfi)
{
    if (!cfi)
        return;
    if (cfi->shared && __atomic_sub_fetch(&cfi->shared_refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    if (!cfi->one_block) {
        free(cfi->ops);
        free(cfi->fdes);
    }
    free(cfi);
}

void jf_cfi_free(jf_cfi *cfi)
{
    jf__clear_error();
    jf__cfi_free(cfi);
}

/* One allocation holding the struct, the FDE array and the ops: the registry
 * keeps one per region, so a clone costs one malloc. Clones are never built
 * on further. */
struct jf_cfi *jf__cfi_clone(const struct jf_cfi *cfi)
{
    if (!cfi) {
        jf__fail(JF_EINVAL, "unwind description is NULL");
        return NULL;
    }
    if (cfi->shared) {
        struct jf_cfi *shared = (struct jf_cfi *)cfi; /* immutable: only the count changes */
        __atomic_add_fetch(&shared->shared_refs, 1, __ATOMIC_RELAXED);
        return shared;
    }
    size_t fdes_bytes = cfi->n_fdes * sizeof(cfi_fde);
    struct jf_cfi *c = malloc(sizeof *c + fdes_bytes + cfi->ops_len);
    if (!c) {
        jf__fail(JF_ENOMEM, "out of memory copying an unwind description");
        return NULL;
    }
    *c = *cfi;
    c->fdes = (cfi_fde *)(void *)(c + 1);
    c->ops = (uint8_t *)c->fdes + fdes_bytes;
    if (fdes_bytes)
        memcpy(c->fdes, cfi->fdes, fdes_bytes);
    if (cfi->ops_len)
        memcpy(c->ops, cfi->ops, cfi->ops_len);
    c->ops_cap = c->ops_len;
    c->fdes_cap = c->n_fdes;
    c->one_block = 1;
    c->cur = NO_FDE;
    c->shared = 0;
    c->shared_refs = 0;
    return c;
}

int jf__cfi_is_shared(const struct jf_cfi *cfi)
{
    return cfi && cfi->shared;
}

int jf__cfi_share(struct jf_cfi *cfi)
{
    if (!cfi || cfi->failed)
        return jf__fail(JF_EINVAL, "only a complete unwind description can be shared");
    if (!cfi->shared) {
        cfi->shared_refs = 1;
        cfi->shared = 1;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* The builder                                                              */
/* ------------------------------------------------------------------------ */

/* Record a failed builder call: the description stays incomplete. */
static int builder_fail(struct jf_cfi *c, const char *fn, int code)
{
    if (c && !c->failed)
        c->failed = fn;
    return code;
}

/* The same, setting the message "fn: ...". */
JF_PRINTF(4, 5)
static int builder_error(struct jf_cfi *c, const char *fn, int code, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return builder_fail(c, fn, jf__fail(code, "%s: %s", fn, msg));
}

/* Common checks for calls that add a rule to the open FDE. */
static int rule_start(struct jf_cfi *c, const char *fn)
{
    jf__clear_error();
    if (!c)
        return jf__fail(JF_EINVAL, "%s: cfi is NULL", fn);
    if (c->one_block)
        return jf__fail(JF_EINVAL, "%s: this description is read-only", fn);
    if (c->cur == NO_FDE)
        return builder_error(c, fn, JF_EINVAL, "no open FDE; call jf_cfi_begin_fde first");
    return 0;
}

static int check_reg(struct jf_cfi *c, const char *fn, unsigned reg)
{
    if (reg > CFI_REG_MAX)
        return builder_error(c, fn, JF_EINVAL, "register %u is above %u", reg, CFI_REG_MAX);
    return 0;
}

/* cfa_offset / data_align, if exact. */
static int factor_offset(struct jf_cfi *c, const char *fn, int64_t offset, int64_t *factored)
{
    int64_t da = c->data_align;
    if ((offset == INT64_MIN && da == -1) || offset % da != 0)
        return builder_error(c, fn, JF_EINVAL, "offset %lld is not a multiple of the data alignment %lld",
                             (long long)offset, (long long)da);
    *factored = offset / da;
    return 0;
}

/* Append one encoded instruction to the open FDE. */
static int emit_op(struct jf_cfi *c, const char *fn, const jf__writer *w)
{
    if (!jf__writer_ok(w))
        return builder_error(c, fn, JF_ERANGE, "instruction too long");
    int rc = ops_append(c, w->buf, w->pos);
    if (rc)
        return builder_fail(c, fn, rc);
    c->fdes[c->cur].ops_len += w->pos;
    return 0;
}

#define OP_BUF_SIZE 24 /* opcode + two 10-byte LEB128 operands */

/* An opcode followed by one ULEB128 operand (register or unfactored offset). */
static int emit_op_uleb(struct jf_cfi *c, const char *fn, uint8_t opcode, uint64_t operand)
{
    uint8_t buf[OP_BUF_SIZE];
    jf__writer w;
    jf__writer_init(&w, buf, sizeof buf);
    jf__put_u8(&w, opcode);
    jf__put_uleb128(&w, operand);
    return emit_op(c, fn, &w);
}

/* An opcode with a register and a signed factored operand. */
static int emit_op_reg_sleb(struct jf_cfi *c, const char *fn, uint8_t opcode, unsigned reg, int64_t operand)
{
    uint8_t buf[OP_BUF_SIZE];
    jf__writer w;
    jf__writer_init(&w, buf, sizeof buf);
    jf__put_u8(&w, opcode);
    jf__put_uleb128(&w, reg);
    jf__put_sleb128(&w, operand);
    return emit_op(c, fn, &w);
}

static int fde_overlaps(const struct jf_cfi *c, size_t at, size_t start, size_t end)
{
    return (at > 0 && c->fdes[at - 1].end > start) || (at < c->n_fdes && c->fdes[at].start < end);
}

static size_t fde_insert_point(const struct jf_cfi *c, size_t start)
{
    size_t at = c->n_fdes;
    while (at > 0 && c->fdes[at - 1].start > start)
        at--;
    return at;
}

/* Insert [start, end) keeping fdes sorted; returns its index or NO_FDE. */
static size_t fde_insert(struct jf_cfi *c, size_t start, size_t end)
{
    if (c->n_fdes == c->fdes_cap) {
        size_t cap = c->fdes_cap ? 2 * c->fdes_cap : 4;
        cfi_fde *fdes = cap < SIZE_MAX / sizeof *fdes ? realloc(c->fdes, cap * sizeof *fdes) : NULL;
        if (!fdes)
            return NO_FDE;
        c->fdes = fdes;
        c->fdes_cap = cap;
    }
    size_t at = fde_insert_point(c, start);
    memmove(&c->fdes[at + 1], &c->fdes[at], (c->n_fdes - at) * sizeof *c->fdes);
    c->fdes[at] = (cfi_fde){start, end, c->ops_len, 0};
    c->n_fdes++;
    return at;
}

int jf_cfi_begin_fde(jf_cfi *cfi, size_t start, size_t end)
{
    static const char fn[] = "jf_cfi_begin_fde";
    jf__clear_error();
    if (!cfi)
        return jf__fail(JF_EINVAL, "%s: cfi is NULL", fn);
    if (cfi->one_block)
        return jf__fail(JF_EINVAL, "%s: this description is read-only", fn);
    if (start >= end)
        return builder_error(cfi, fn, JF_EINVAL, "empty range [%zu, %zu)", start, end);
    if (end - start > UINT32_MAX)
        return builder_error(cfi, fn, JF_ERANGE, "range [%zu, %zu) exceeds 4 GiB", start, end);
    if (fde_overlaps(cfi, fde_insert_point(cfi, start), start, end))
        return builder_error(cfi, fn, JF_EINVAL, "[%zu, %zu) overlaps another FDE", start, end);
    size_t at = fde_insert(cfi, start, end);
    if (at == NO_FDE)
        return builder_error(cfi, fn, JF_ENOMEM, "out of memory");
    cfi->cur = at;
    cfi->loc = start;
    cfi->depth = 0;
    return 0;
}

/* The smallest DW_CFA_advance_loc* form for `units` (< 2^32: FDE ranges are
 * below 4 GiB). */
static void put_advance(jf__writer *w, uint64_t units)
{
    if (units < 0x40) {
        jf__put_u8(w, (uint8_t)(DW_CFA_advance_loc | units));
    } else if (units <= UINT8_MAX) {
        jf__put_u8(w, DW_CFA_advance_loc1);
        jf__put_u8(w, (uint8_t)units);
    } else if (units <= UINT16_MAX) {
        jf__put_u8(w, DW_CFA_advance_loc2);
        jf__put_u16(w, (uint16_t)units);
    } else {
        jf__put_u8(w, DW_CFA_advance_loc4);
        jf__put_u32(w, (uint32_t)units);
    }
}

int jf_cfi_advance_to(jf_cfi *cfi, size_t offset)
{
    static const char fn[] = "jf_cfi_advance_to";
    int rc = rule_start(cfi, fn);
    if (rc)
        return rc;
    const cfi_fde *f = &cfi->fdes[cfi->cur];
    if (offset < cfi->loc || offset >= f->end)
        return builder_error(cfi, fn, JF_EINVAL, "offset %zu is not in [%zu, %zu) (location, FDE end)",
                             offset, cfi->loc, f->end);
    size_t delta = offset - cfi->loc;
    if (delta % cfi->code_align)
        return builder_error(cfi, fn, JF_EINVAL, "advance of %zu bytes: not a multiple of code alignment %u",
                             delta, (unsigned)cfi->code_align);
    uint64_t units = delta / cfi->code_align;
    if (units == 0)
        return 0;
    uint8_t buf[OP_BUF_SIZE];
    jf__writer w;
    jf__writer_init(&w, buf, sizeof buf);
    put_advance(&w, units);
    if ((rc = emit_op(cfi, fn, &w)) != 0)
        return rc;
    cfi->loc = offset;
    return 0;
}

int jf_cfi_def_cfa(jf_cfi *cfi, unsigned reg, int64_t offset)
{
    static const char fn[] = "jf_cfi_def_cfa";
    int64_t factored = 0;
    int rc = rule_start(cfi, fn);
    if (rc || (rc = check_reg(cfi, fn, reg)) != 0)
        return rc;
    if (offset >= 0) {
        uint8_t buf[OP_BUF_SIZE];
        jf__writer w;
        jf__writer_init(&w, buf, sizeof buf);
        jf__put_u8(&w, DW_CFA_def_cfa);
        jf__put_uleb128(&w, reg);
        jf__put_uleb128(&w, (uint64_t)offset);
        return emit_op(cfi, fn, &w);
    }
    if ((rc = factor_offset(cfi, fn, offset, &factored)) != 0)
        return rc;
    return emit_op_reg_sleb(cfi, fn, DW_CFA_def_cfa_sf, reg, factored);
}

int jf_cfi_def_cfa_offset(jf_cfi *cfi, int64_t offset)
{
    static const char fn[] = "jf_cfi_def_cfa_offset";
    int64_t factored = 0;
    int rc = rule_start(cfi, fn);
    if (rc)
        return rc;
    if (offset >= 0)
        return emit_op_uleb(cfi, fn, DW_CFA_def_cfa_offset, (uint64_t)offset);
    if ((rc = factor_offset(cfi, fn, offset, &factored)) != 0)
        return rc;
    uint8_t buf[OP_BUF_SIZE];
    jf__writer w;
    jf__writer_init(&w, buf, sizeof buf);
    jf__put_u8(&w, DW_CFA_def_cfa_offset_sf);
    jf__put_sleb128(&w, factored);
    return emit_op(cfi, fn, &w);
}

int jf_cfi_def_cfa_register(jf_cfi *cfi, unsigned reg)
{
    static const char fn[] = "jf_cfi_def_cfa_register";
    int rc = rule_start(cfi, fn);
    if (rc || (rc = check_reg(cfi, fn, reg)) != 0)
        return rc;
    return emit_op_uleb(cfi, fn, DW_CFA_def_cfa_register, reg);
}

/* The checks of a rule putting reg at a CFA-relative place; the factored offset. */
static int cfa_relative_rule(jf_cfi *cfi, const char *fn, unsigned reg, int64_t cfa_offset, int64_t *factored)
{
    int rc = rule_start(cfi, fn);
    if (rc || (rc = check_reg(cfi, fn, reg)) != 0)
        return rc;
    return factor_offset(cfi, fn, cfa_offset, factored);
}

int jf_cfi_offset(jf_cfi *cfi, unsigned reg, int64_t cfa_offset)
{
    static const char fn[] = "jf_cfi_offset";
    int64_t factored = 0;
    int rc = cfa_relative_rule(cfi, fn, reg, cfa_offset, &factored);
    if (rc)
        return rc;
    if (factored < 0)
        return emit_op_reg_sleb(cfi, fn, DW_CFA_offset_extended_sf, reg, factored);
    uint8_t buf[OP_BUF_SIZE];
    jf__writer w;
    jf__writer_init(&w, buf, sizeof buf);
    if (reg < 0x40) {
        jf__put_u8(&w, (uint8_t)(DW_CFA_offset | reg));
    } else {
        jf__put_u8(&w, DW_CFA_offset_extended);
        jf__put_uleb128(&w, reg);
    }
    jf__put_uleb128(&w, (uint64_t)factored);
    return emit_op(cfi, fn, &w);
}

int jf_cfi_val_offset(jf_cfi *cfi, unsigned reg, int64_t cfa_offset)
{
    static const char fn[] = "jf_cfi_val_offset";
    int64_t factored = 0;
    int rc = cfa_relative_rule(cfi, fn, reg, cfa_offset, &factored);
    return rc ? rc : emit_op_reg_sleb(cfi, fn, DW_CFA_val_offset_sf, reg, factored);
}

int jf_cfi_restore(jf_cfi *cfi, unsigned reg)
{
    static const char fn[] = "jf_cfi_restore";
    int rc = rule_start(cfi, fn);
    if (rc || (rc = check_reg(cfi, fn, reg)) != 0)
        return rc;
    if (reg < 0x40) {
        uint8_t op = (uint8_t)(DW_CFA_restore | reg);
        jf__writer w = {&op, 1, 1, 0, JF_HOST_BIG_ENDIAN};
        return emit_op(cfi, fn, &w);
    }
    return emit_op_uleb(cfi, fn, DW_CFA_restore_extended, reg);
}

int jf_cfi_same_value(jf_cfi *cfi, unsigned reg)
{
    static const char fn[] = "jf_cfi_same_value";
    int rc = rule_start(cfi, fn);
    if (rc || (rc = check_reg(cfi, fn, reg)) != 0)
        return rc;
    return emit_op_uleb(cfi, fn, DW_CFA_same_value, reg);
}

static int emit_op_bare(struct jf_cfi *c, const char *fn, uint8_t opcode)
{
    jf__writer w = {&opcode, 1, 1, 0, JF_HOST_BIG_ENDIAN};
    return emit_op(c, fn, &w);
}

int jf_cfi_remember_state(jf_cfi *cfi)
{
    static const char fn[] = "jf_cfi_remember_state";
    int rc = rule_start(cfi, fn);
    if (rc)
        return rc;
    if (cfi->depth == CFI_MAX_STATE_DEPTH)
        return builder_error(cfi, fn, JF_EINVAL, "remembered states nest deeper than %u",
                             CFI_MAX_STATE_DEPTH);
    if ((rc = emit_op_bare(cfi, fn, DW_CFA_remember_state)) != 0)
        return rc;
    cfi->depth++;
    return 0;
}

int jf_cfi_restore_state(jf_cfi *cfi)
{
    static const char fn[] = "jf_cfi_restore_state";
    int rc = rule_start(cfi, fn);
    if (rc)
        return rc;
    if (cfi->depth == 0)
        return builder_error(cfi, fn, JF_EINVAL, "no remembered state in this FDE");
    if ((rc = emit_op_bare(cfi, fn, DW_CFA_restore_state)) != 0)
        return rc;
    cfi->depth--;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Common shapes                                                            */
/* ------------------------------------------------------------------------ */

static int shape_start(jf_cfi *cfi, const char *fn)
{
    jf__clear_error();
    if (!cfi)
        return jf__fail(JF_EINVAL, "%s: cfi is NULL", fn);
    if (!cfi->arch)
        return builder_error(cfi, fn, JF_EINVAL, "description has no known architecture");
    return 0;
}

int jf_cfi_add_frameless(jf_cfi *cfi, size_t start, size_t end, int64_t cfa_sp_offset)
{
    static const char fn[] = "jf_cfi_add_frameless";
    int rc = shape_start(cfi, fn);
    if (rc)
        return rc;
    if (cfa_sp_offset < 0)
        return builder_error(cfi, fn, JF_EINVAL, "negative CFA offset %lld", (long long)cfa_sp_offset);
    if ((rc = jf_cfi_begin_fde(cfi, start, end)) != 0)
        return rc;
    if (cfa_sp_offset == cfi->arch->entry_cfa_offset)
        return 0;
    rc = jf_cfi_def_cfa_offset(cfi, cfa_sp_offset);
    /* s390x: the unwinders take an SP without a rule as unchanged (see
     * caller_sp_below_cfa in arch/cfi_arch.h). */
    if (!rc && cfi->arch->caller_sp_below_cfa)
        rc = jf_cfi_val_offset(cfi, cfi->arch->sp, -(int64_t)cfi->arch->caller_sp_below_cfa);
    return rc;
}

static int check_frame_order(const jf_standard_frame *f, int needs_epilogue_start)
{
    static const char fn[] = "jf_cfi_add_standard_frame";
    if (!(f->start < f->after_push && f->after_push < f->after_fp_set && f->after_fp_set <= f->end))
        return jf__fail(JF_EINVAL, "%s: need start < after_push < after_fp_set <= end (%zu, %zu, %zu, %zu)",
                        fn, f->start, f->after_push, f->after_fp_set, f->end);
    if (f->after_pop == 0)
        return f->epilogue_start ? jf__fail(JF_EINVAL, "%s: epilogue_start without after_pop", fn) : 0;
    if (f->after_pop <= f->after_fp_set || f->after_pop > f->end)
        return jf__fail(JF_EINVAL, "%s: after_pop %zu is not in (after_fp_set, end]", fn, f->after_pop);
    if (f->epilogue_start && (f->epilogue_start < f->after_fp_set || f->epilogue_start >= f->after_pop))
        return jf__fail(JF_EINVAL, "%s: epilogue_start %zu is not in [after_fp_set, after_pop)", fn,
                        f->epilogue_start);
    if (needs_epilogue_start && !f->epilogue_start)
        return jf__fail(JF_EINVAL,
                        "%s: this architecture reloads the frame pointer before popping: "
                        "epilogue_start is required with after_pop",
                        fn);
    return 0;
}

/* Describe the frame record saves: FP at CFA-16, RA at CFA-8. */
static int frame_saves(jf_cfi *cfi, const jf__cfi_arch_facts *a)
{
    int rc = jf_cfi_offset(cfi, a->fp, -16);
    if (!rc && !a->ra_rule_in_cie)
        rc = jf_cfi_offset(cfi, a->ra, -8);
    return rc;
}

/* Rules up to the end of the prologue. */
static int frame_prologue(jf_cfi *cfi, const jf__cfi_arch_facts *a, const jf_standard_frame *f)
{
    int rc = jf_cfi_advance_to(cfi, f->after_push);
    if (!rc)
        rc = jf_cfi_def_cfa_offset(cfi, 16);
    if (!rc && a->push_saves)
        rc = frame_saves(cfi, a);
    if (rc || f->after_fp_set == f->end)
        return rc;
    rc = jf_cfi_advance_to(cfi, f->after_fp_set);
    if (!rc)
        rc = a->fp_cfa_offset == 16 ? jf_cfi_def_cfa_register(cfi, a->fp)
                                    : jf_cfi_def_cfa(cfi, a->fp, a->fp_cfa_offset);
    if (!rc && !a->push_saves)
        rc = frame_saves(cfi, a);
    return rc;
}

/* Rules from the epilogue on: CFA back to SP, then the entry state. */
static int frame_epilogue(jf_cfi *cfi, const jf__cfi_arch_facts *a, const jf_standard_frame *f)
{
    int rc = 0;
    if (f->epilogue_start) {
        rc = jf_cfi_advance_to(cfi, f->epilogue_start);
        if (!rc)
            rc = jf_cfi_def_cfa(cfi, a->sp, 16);
    }
    if (rc || f->after_pop == f->end)
        return rc;
    rc = jf_cfi_advance_to(cfi, f->after_pop);
    if (!rc)
        rc = jf_cfi_def_cfa(cfi, a->sp, a->entry_cfa_offset);
    if (!rc)
        rc = jf_cfi_restore(cfi, a->fp);
    if (!rc && !a->ra_rule_in_cie)
        rc = jf_cfi_restore(cfi, a->ra);
    return rc;
}

int jf_cfi_add_standard_frame(jf_cfi *cfi, const jf_standard_frame *frame)
{
    static const char fn[] = "jf_cfi_add_standard_frame";
    int rc = shape_start(cfi, fn);
    if (rc)
        return rc;
    /* The epilogue fields are optional: a struct without them has none. */
    size_t required = offsetof(jf_standard_frame, after_fp_set) + sizeof frame->after_fp_set;
    if (!frame || frame->struct_size < required)
        return builder_error(cfi, fn, JF_EINVAL,
                             "frame is NULL or its struct_size is not set "
                             "(use JF_STANDARD_FRAME_INIT)");
    jf_standard_frame copy = JF_STANDARD_FRAME_INIT;
    memcpy(&copy, frame, frame->struct_size < sizeof copy ? frame->struct_size : sizeof copy);
    frame = &copy;
    const jf__cfi_arch_facts *a = cfi->arch;
    if (!a->has_frame_record)
        return builder_error(cfi, fn, JF_ENOTSUP,
                             "%s has no standard frame record: describe the "
                             "frame with the rules (jf_cfi_offset...)",
                             a->name);
    if ((rc = check_frame_order(frame, a->fp_reloaded_apart)) != 0)
        return builder_fail(cfi, fn, rc);
    if ((rc = jf_cfi_begin_fde(cfi, frame->start, frame->end)) != 0)
        return rc;
    if ((rc = frame_prologue(cfi, a, frame)) != 0)
        return rc;
    return frame->after_pop ? frame_epilogue(cfi, a, frame) : 0;
}

/* ------------------------------------------------------------------------ */
/* Raw instruction bytes (trampoline templates)                            */
/* ------------------------------------------------------------------------ */

typedef struct insn_reader {
    const uint8_t *p, *end;
} insn_reader;

static int read_uleb(insn_reader *r, uint64_t *v)
{
    *v = 0;
    for (unsigned shift = 0; r->p < r->end; shift += 7) {
        uint8_t b = *r->p++;
        if (shift < 64)
            *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return 0;
    }
    return -1;
}

static int skip_bytes(insn_reader *r, uint64_t n)
{
    if (n > (uint64_t)(r->end - r->p))
        return -1;
    r->p += n;
    return 0;
}

/* Operand shapes of the non-primary opcodes. */
static int skip_operands(insn_reader *r, uint8_t op, uint64_t *advance)
{
    uint64_t a, b;
    switch (op) {
    case DW_CFA_nop:
    case DW_CFA_remember_state:
    case DW_CFA_restore_state:
    case DW_CFA_GNU_window_save: return 0;
    case DW_CFA_advance_loc1: return r->p < r->end ? (*advance = *r->p++, 0) : -1;
    case DW_CFA_advance_loc2:
        if (r->end - r->p < 2)
            return -1;
        *advance = jf__load_uint(r->p, 2, JF_HOST_BIG_ENDIAN);
        r->p += 2;
        return 0;
    case DW_CFA_advance_loc4:
        if (r->end - r->p < 4)
            return -1;
        *advance = jf__load_host_u32(r->p);
        r->p += 4;
        return 0;
    case DW_CFA_undefined:
    case DW_CFA_same_value:
    case DW_CFA_def_cfa_register:
    case DW_CFA_def_cfa_offset:
    case DW_CFA_def_cfa_offset_sf:
    case DW_CFA_restore_extended:
    case DW_CFA_GNU_args_size: return read_uleb(r, &a);
    case DW_CFA_offset_extended:
    case DW_CFA_register:
    case DW_CFA_def_cfa:
    case DW_CFA_offset_extended_sf:
    case DW_CFA_def_cfa_sf:
    case DW_CFA_val_offset:
    case DW_CFA_val_offset_sf:
    case DW_CFA_GNU_negative_offset_extended: return read_uleb(r, &a) || read_uleb(r, &b) ? -1 : 0;
    case DW_CFA_def_cfa_expression: return read_uleb(r, &a) || skip_bytes(r, a) ? -1 : 0;
    case DW_CFA_expression:
    case DW_CFA_val_expression: return read_uleb(r, &a) || read_uleb(r, &b) || skip_bytes(r, b) ? -1 : 0;
    default: return -1; /* DW_CFA_set_loc (address encoding unknown here) and unknown opcodes */
    }
}

/* Check raw CFA instructions; `range` bounds the location (0: a CIE, no
 * advances allowed). */
static int check_raw_insns(const uint8_t *insns, size_t len, uint32_t code_align, uint64_t range, int is_cie)
{
    if (len == 0)
        return 0;
    insn_reader r = {insns, insns + len};
    uint64_t loc = 0, depth = 0;
    while (r.p < r.end) {
        size_t at = (size_t)(r.p - insns);
        uint8_t op = *r.p++;
        uint64_t advance = 0, offset;
        if ((op & 0xc0) == DW_CFA_advance_loc)
            advance = op & 0x3f;
        else if ((op & 0xc0) == DW_CFA_offset && read_uleb(&r, &offset))
            return jf__fail(JF_EINVAL, "raw CFI: truncated DW_CFA_offset at byte %zu", at);
        else if ((op & 0xc0) == 0 && skip_operands(&r, op, &advance))
            return jf__fail(JF_EINVAL, "raw CFI: unsupported or truncated opcode 0x%02x at byte %zu", op, at);
        if (op == DW_CFA_remember_state && ++depth > CFI_MAX_STATE_DEPTH)
            return jf__fail(JF_EINVAL, "raw CFI: remember_state nested deeper than %u at byte %zu",
                            CFI_MAX_STATE_DEPTH, at);
        if (op == DW_CFA_restore_state && depth-- == 0)
            return jf__fail(JF_EINVAL, "raw CFI: restore_state without remember_state at byte %zu", at);
        if (advance && (is_cie || advance > (range - loc) / code_align))
            return jf__fail(JF_EINVAL, "raw CFI: advance past the end of the range at byte %zu", at);
        loc += advance * code_align;
    }
    return 0;
}

struct jf_cfi *jf__cfi_from_raw(const jf__raw_cie *cie, const uint8_t *fde_insns, size_t fde_insns_len,
                                size_t start, size_t end)
{
    if (!cie || (!cie->insns && cie->insns_len) || (!fde_insns && fde_insns_len)) {
        jf__fail(JF_EINVAL, "jf__cfi_from_raw: NULL argument");
        return NULL;
    }
    if (cie->code_align == 0 || cie->data_align == 0 || cie->ra_reg > CFI_REG_MAX || start >= end ||
        end - start > UINT32_MAX) {
        jf__fail(JF_EINVAL, "jf__cfi_from_raw: bad CIE parameters or range [%zu, %zu)", start, end);
        return NULL;
    }
    if (check_raw_insns(cie->insns, cie->insns_len, cie->code_align, 0, 1) ||
        check_raw_insns(fde_insns, fde_insns_len, cie->code_align, end - start, 0))
        return NULL;
    struct jf_cfi *c = cfi_alloc(cie->code_align, cie->data_align, cie->ra_reg, cie->insns, cie->insns_len);
    if (!c)
        return NULL;
    if (fde_insert(c, start, end) == NO_FDE || ops_append(c, fde_insns, fde_insns_len) != 0) {
        jf__cfi_free(c);
        jf__fail(JF_ENOMEM, "out of memory building an unwind description");
        return NULL;
    }
    c->fdes[0].ops_len = fde_insns_len;
    return c;
}

/* ------------------------------------------------------------------------ */
/* The published table's form (src/pub_layout.h: jf__pub_cfi, jf__pub_fde)         */
/* ------------------------------------------------------------------------ */

/* The CIE's initial instructions: what follows its pointer-encoding byte
 * (with the record's DW_CFA_nop padding, which re-encodes to the same bytes). */
static const uint8_t *cie_insns(const struct jf_cfi *c, size_t *len)
{
    *len = c->cie_len - c->cie_enc_off - 1;
    return c->ops + c->cie_enc_off + 1;
}

size_t jf__cfi_serialized_size(const struct jf_cfi *cfi)
{
    if (!cfi || cfi->failed || cfi->n_fdes == 0 || cfi->n_fdes > UINT32_MAX)
        return 0;
    size_t cie_len, n = 5 * 4;
    cie_insns(cfi, &cie_len);
    n += cie_len;
    for (size_t i = 0; i < cfi->n_fdes; i++) {
        if (cfi->fdes[i].end > UINT32_MAX || cfi->fdes[i].ops_len > UINT32_MAX)
            return 0;
        n += 3 * 4 + cfi->fdes[i].ops_len;
    }
    return n;
}

static uint8_t *put_host_u32(uint8_t *at, uint32_t v)
{
    memcpy(at, &v, 4);
    return at + 4;
}

/* memcpy without a call for the few bytes of most rules (the published
 * table serializes a description per registration): two overlapping
 * copies of 8 or of 4 bytes, neither past from + n. */
static inline uint8_t *put_bytes(uint8_t *at, const uint8_t *from, size_t n)
{
    uint64_t a8, b8;
    uint32_t a4, b4;
    if (n > 16) {
        memcpy(at, from, n);
    } else if (n >= 8) {
        memcpy(&a8, from, 8);
        memcpy(&b8, from + n - 8, 8);
        memcpy(at, &a8, 8);
        memcpy(at + n - 8, &b8, 8);
    } else if (n >= 4) {
        memcpy(&a4, from, 4);
        memcpy(&b4, from + n - 4, 4);
        memcpy(at, &a4, 4);
        memcpy(at + n - 4, &b4, 4);
    } else {
        for (size_t k = 0; k < n; k++)
            at[k] = from[k];
    }
    return at + n;
}

void jf__cfi_serialize(const struct jf_cfi *cfi, uint8_t *out)
{
    size_t cie_len;
    const uint8_t *cie = cie_insns(cfi, &cie_len);
    uint32_t head[5] = {cfi->code_align, (uint32_t)cfi->data_align, cfi->ra_reg, (uint32_t)cie_len,
                        (uint32_t)cfi->n_fdes};
    memcpy(out, head, sizeof head);
    out = put_bytes(out + sizeof head, cie, cie_len);
    for (size_t i = 0; i < cfi->n_fdes; i++) {
        const cfi_fde *f = &cfi->fdes[i];
        out = put_host_u32(out, (uint32_t)f->start);
        out = put_host_u32(out, (uint32_t)f->end);
        out = put_host_u32(out, (uint32_t)f->ops_len);
        out = put_bytes(out, cfi->ops + f->ops_off, f->ops_len);
    }
}

/* The next n bytes of [*at, end), or NULL if there are fewer. */
static const uint8_t *take_bytes(const uint8_t **at, const uint8_t *end, size_t n)
{
    if (n > (size_t)(end - *at))
        return NULL;
    const uint8_t *p = *at;
    *at += n;
    return p;
}

static int take_u32(const uint8_t **at, const uint8_t *end, uint32_t *v)
{
    const uint8_t *p = take_bytes(at, end, 4);
    if (p)
        memcpy(v, p, 4);
    return p ? 0 : -1;
}

/* One FDE of a serialized description appended to c; -1 if unsound. */
static int take_fde(struct jf_cfi *c, const uint8_t **at, const uint8_t *end)
{
    uint32_t start, fend, len;
    if (take_u32(at, end, &start) || take_u32(at, end, &fend) || take_u32(at, end, &len) || start >= fend ||
        (c->n_fdes && c->fdes[c->n_fdes - 1].end > start))
        return jf__fail(JF_EINVAL, "serialized CFI: bad or unsorted FDE range");
    const uint8_t *insns = take_bytes(at, end, len);
    if (!insns || check_raw_insns(insns, len, c->code_align, fend - start, 0))
        return jf__fail(JF_EINVAL, "serialized CFI: bad FDE instructions");
    size_t i = fde_insert(c, start, fend);
    if (i == NO_FDE || ops_append(c, insns, len) != 0)
        return jf__fail(JF_ENOMEM, "out of memory reading an unwind description");
    c->fdes[i].ops_len = len;
    return 0;
}

struct jf_cfi *jf__cfi_deserialize(const uint8_t *bytes, size_t len, size_t max_fdes)
{
    const uint8_t *at = bytes, *end = bytes + len;
    uint32_t head[5];
    const uint8_t *h = take_bytes(&at, end, sizeof head);
    if (!h) {
        jf__fail(JF_EINVAL, "serialized CFI: truncated");
        return NULL;
    }
    memcpy(head, h, sizeof head);
    const uint8_t *cie = take_bytes(&at, end, head[3]);
    if (!cie || head[0] == 0 || head[1] == 0 || head[2] > CFI_REG_MAX || head[4] == 0 || head[4] > max_fdes ||
        check_raw_insns(cie, head[3], head[0], 0, 1)) {
        jf__fail(JF_EINVAL, "serialized CFI: bad CIE");
        return NULL;
    }
    struct jf_cfi *c = cfi_alloc(head[0], (int32_t)head[1], head[2], cie, head[3]);
    for (uint32_t i = 0; c && i < head[4]; i++)
        if (take_fde(c, &at, end) != 0) {
            jf__cfi_free(c);
            c = NULL;
        }
    return c;
}

/* ------------------------------------------------------------------------ */
/* Validation and emission                                                  */
/* ------------------------------------------------------------------------ */

/* 1 if the FDE's first row is the CIE's initial one: no CFA instruction
 * comes before its first advance (nops aside). */
static int fde_starts_in_entry_state(const struct jf_cfi *cfi, const cfi_fde *f)
{
    for (size_t i = 0; i < f->ops_len; i++) {
        uint8_t op = cfi->ops[f->ops_off + i];
        if (op == DW_CFA_nop)
            continue;
        return (op & 0xc0) == DW_CFA_advance_loc || op == DW_CFA_advance_loc1 || op == DW_CFA_advance_loc2 ||
               op == DW_CFA_advance_loc4;
    }
    return 1;
}

size_t jf__cfi_next_entry(const struct jf_cfi *cfi, size_t from, size_t size)
{
    if (!cfi)
        return size;
    size_t lo = 0, hi = cfi->n_fdes; /* first FDE starting above `from` */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cfi->fdes[mid].start <= from)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < cfi->n_fdes && cfi->fdes[lo].start < size; lo++)
        if (fde_starts_in_entry_state(cfi, &cfi->fdes[lo]))
            return cfi->fdes[lo].start;
    return size;
}

int jf__cfi_validate(const struct jf_cfi *cfi, size_t size)
{
    if (!cfi)
        return jf__fail(JF_EINVAL, "unwind description is NULL");
    if (cfi->failed)
        return jf__fail(JF_EINVAL, "unwind description is incomplete: an earlier %s call failed",
                        cfi->failed);
    if (cfi->n_fdes == 0)
        return jf__fail(JF_EINVAL, "unwind description has no FDE");
    const cfi_fde *last = &cfi->fdes[cfi->n_fdes - 1];
    if (last->end > size)
        return jf__fail(JF_EINVAL, "unwind description: FDE [%zu, %zu) ends past the %zu-byte region",
                        last->start, last->end, size);
    return 0;
}

/* Bytes of pc_begin and of pc_range in an FDE: 32-bit pc-relative for
 * perf's DSO, whose code is always near; 64-bit absolute otherwise, because
 * a GDB symfile or unwinder table may describe code terabytes away from the
 * memory holding it (heap versus mmap'ed JIT code, code spread over the
 * address space in one merged table). */
static size_t fde_address_size(jf__eh_layout layout)
{
    return layout == JF_EH_LAYOUT_ABSOLUTE ? 8 : 4;
}

/* length, CIE pointer, pc_begin, pc_range, augmentation length 0, instructions */
static size_t fde_size(const cfi_fde *f, jf__eh_layout layout)
{
    return jf__round_up(4 + 4 + 2 * fde_address_size(layout) + 1 + f->ops_len, CFI_RECORD_ALIGN);
}

/* The absolute layout ends .eh_frame with a zero terminator (__register_frame). */
static size_t eh_frame_size(const struct jf_cfi *c, jf__eh_layout layout)
{
    size_t n = c->cie_len + (layout == JF_EH_LAYOUT_ABSOLUTE ? 4 : 0);
    for (size_t i = 0; i < c->n_fdes; i++)
        n += fde_size(&c->fdes[i], layout);
    return n;
}

size_t jf__cfi_max_image_size(const struct jf_cfi *cfi)
{
    if (!cfi)
        return 0;
    return eh_frame_size(cfi, JF_EH_LAYOUT_ABSOLUTE) + EH_FRAME_HDR_FIXED + EH_FRAME_HDR_ROW * cfi->n_fdes;
}

/* Where the image lives: region offset 0 is at code_base, .eh_frame at eh_addr. */
typedef struct eh_layout {
    jf__eh_layout kind;
    uint64_t code_base;
    uint64_t eh_addr;
} eh_layout;

/* target - place as a signed 32-bit value, if it fits. */
static int rel32(uint64_t target, uint64_t place, int32_t *out)
{
    uint64_t d = target - place;
    if (d > (uint64_t)INT32_MAX && d < (uint64_t)0 - ((uint64_t)INT32_MAX + 1))
        return jf__fail(JF_ERANGE, "unwind image: address 0x%llx is out of 32-bit reach of 0x%llx",
                        (unsigned long long)target, (unsigned long long)place);
    *out = d > (uint64_t)INT32_MAX ? (int32_t) - (int64_t)((uint64_t)0 - d) : (int32_t)d;
    return 0;
}

static int put_fde(jf__writer *w, const struct jf_cfi *c, const cfi_fde *f, const eh_layout *l)
{
    size_t at = w->pos;
    jf__put_u32(w, 0);
    jf__put_u32(w, (uint32_t)(w->pos)); /* back to the CIE at offset 0 */
    if (l->kind == JF_EH_LAYOUT_ABSOLUTE) {
        jf__put_u64(w, l->code_base + f->start);
        jf__put_u64(w, (uint64_t)(f->end - f->start));
    } else {
        int32_t pc_begin = 0;
        int rc = rel32(l->code_base + f->start, l->eh_addr + w->pos, &pc_begin);
        if (rc)
            return rc;
        jf__put_s32(w, pc_begin);
        jf__put_u32(w, (uint32_t)(f->end - f->start));
    }
    jf__put_uleb128(w, 0);
    if (f->ops_len)
        jf__put_bytes(w, c->ops + f->ops_off, f->ops_len);
    finish_record(w, at);
    return 0;
}

/* Can every row of the search table be encoded relative to the header? */
static int hdr_rows_reach(const struct jf_cfi *c, const eh_layout *l, uint64_t hdr_addr)
{
    int32_t v;
    for (size_t i = 0; i < c->n_fdes; i++)
        if (rel32(l->code_base + c->fdes[i].start, hdr_addr, &v) != 0)
            return 0;
    jf__clear_error();
    return 1;
}

/*
 * .eh_frame_hdr: fixed part then one row per FDE, sorted by start. perf's
 * layout always has its table (perf binary-searches it). In the absolute
 * layout the code may be out of 32-bit reach of the header; the table is
 * then omitted (fde_count and table encodings DW_EH_PE_omit) and readers
 * scan .eh_frame — gdb and __register_frame never read the header anyway.
 */
static int put_hdr(jf__writer *w, const struct jf_cfi *c, const eh_layout *l)
{
    uint64_t hdr_addr = l->eh_addr + w->pos;
    int with_table = l->kind != JF_EH_LAYOUT_ABSOLUTE || hdr_rows_reach(c, l, hdr_addr);
    int32_t v = 0;
    jf__put_u8(w, 1);
    jf__put_u8(w, DW_EH_PE_pcrel | DW_EH_PE_sdata4);
    jf__put_u8(w, with_table ? DW_EH_PE_udata4 : DW_EH_PE_omit);
    jf__put_u8(w, with_table ? DW_EH_PE_datarel | DW_EH_PE_sdata4 : DW_EH_PE_omit);
    int rc = rel32(l->eh_addr, hdr_addr + 4, &v);
    if (rc)
        return rc;
    jf__put_s32(w, v);
    if (!with_table)
        return 0;
    jf__put_u32(w, (uint32_t)c->n_fdes);
    uint64_t fde_addr = l->eh_addr + c->cie_len;
    for (size_t i = 0; i < c->n_fdes; i++) {
        const cfi_fde *f = &c->fdes[i];
        if ((rc = rel32(l->code_base + f->start, hdr_addr, &v)) != 0)
            return rc;
        jf__put_s32(w, v);
        if ((rc = rel32(fde_addr, hdr_addr, &v)) != 0)
            return rc;
        jf__put_s32(w, v);
        fde_addr += fde_size(f, l->kind);
    }
    return 0;
}

/* The CIE as encoded at creation, with the FDE pointer encoding of the layout. */
static void put_cie_for_layout(jf__writer *w, const struct jf_cfi *c, jf__eh_layout layout)
{
    size_t at = w->pos;
    jf__put_bytes(w, c->ops, c->cie_len);
    if (layout == JF_EH_LAYOUT_ABSOLUTE && jf__writer_ok(w))
        jf__patch_uint(w, at + c->cie_enc_off, DW_EH_PE_absptr, 1);
}

int jf__cfi_emit(const struct jf_cfi *cfi, jf__eh_layout layout, uint64_t code_addr, uint64_t code_size,
                 uint64_t image_addr, uint8_t *buf, size_t cap, jf__eh_image *out)
{
    if (!cfi || !out || (!buf && cap))
        return jf__fail(JF_EINVAL, "jf__cfi_emit: NULL argument");
    if (layout != JF_EH_LAYOUT_PERF_JITDUMP && layout != JF_EH_LAYOUT_ABSOLUTE)
        return jf__fail(JF_EINVAL, "jf__cfi_emit: unknown layout %d", (int)layout);
    if (code_size > SIZE_MAX - 8)
        return jf__fail(JF_ERANGE, "jf__cfi_emit: code size too large");
    /* No FDE: a CIE and a header that describe nothing (see cfi.h). */
    int rc = cfi->n_fdes || cfi->failed ? jf__cfi_validate(cfi, (size_t)code_size) : 0;
    if (rc)
        return rc;
    size_t eh_size = eh_frame_size(cfi, layout);
    size_t max_need = eh_size + EH_FRAME_HDR_FIXED + EH_FRAME_HDR_ROW * cfi->n_fdes;
    if (max_need > cap)
        return jf__fail(JF_ERANGE, "jf__cfi_emit: %zu-byte buffer, %zu bytes needed", cap, max_need);
    eh_layout l = layout == JF_EH_LAYOUT_ABSOLUTE
                      ? (eh_layout){layout, code_addr, image_addr}
                      : (eh_layout){layout, 0, jf__round_up((size_t)code_size, 8)};
    jf__writer w;
    jf__writer_init(&w, buf, cap);
    put_cie_for_layout(&w, cfi, layout);
    for (size_t i = 0; i < cfi->n_fdes; i++)
        if ((rc = put_fde(&w, cfi, &cfi->fdes[i], &l)) != 0)
            return rc;
    if (layout == JF_EH_LAYOUT_ABSOLUTE)
        jf__put_u32(&w, 0);
    if ((rc = put_hdr(&w, cfi, &l)) != 0)
        return rc;
    if (!jf__writer_ok(&w) || w.pos < eh_size || w.pos > max_need)
        return jf__internal("jf__cfi_emit: size mismatch (%zu of %zu bytes)", w.pos, max_need);
    out->eh_frame_size = eh_size;
    out->hdr_size = w.pos - eh_size;
    return 0;
}
