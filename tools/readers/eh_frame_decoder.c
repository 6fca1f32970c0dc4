/*
 * .eh_frame decoding and a DWARF CFA interpreter, written from the DWARF 4
 * and LSB specifications. It exists so the tool can check unwinding info
 * produced by our own CFI assembler without sharing a line of code with it:
 * that is why it declares the DWARF constants again instead of including
 * src/dwarf_cfa.h (an oracle must not share the checked code's mistakes).
 */
#include "eh_frame_decoder.h"

#include <stdlib.h>
#include <string.h>

/* DW_EH_PE_* pointer encodings. */
enum {
    PE_ABSPTR = 0x00,
    PE_ULEB128 = 0x01,
    PE_UDATA2 = 0x02,
    PE_UDATA4 = 0x03,
    PE_UDATA8 = 0x04,
    PE_SLEB128 = 0x09,
    PE_SDATA2 = 0x0a,
    PE_SDATA4 = 0x0b,
    PE_SDATA8 = 0x0c,
    PE_PCREL = 0x10,
    PE_DATAREL = 0x30,
    PE_INDIRECT = 0x80,
    PE_OMIT = 0xff,
};

/* DW_CFA_* opcodes (the primary ones carry their operand in the low 6 bits). */
enum {
    CFA_ADVANCE_LOC = 0x40,
    CFA_OFFSET = 0x80,
    CFA_RESTORE = 0xc0,
    CFA_NOP = 0x00,
    CFA_SET_LOC = 0x01,
    CFA_ADVANCE_LOC1 = 0x02,
    CFA_ADVANCE_LOC2 = 0x03,
    CFA_ADVANCE_LOC4 = 0x04,
    CFA_OFFSET_EXTENDED = 0x05,
    CFA_RESTORE_EXTENDED = 0x06,
    CFA_UNDEFINED = 0x07,
    CFA_SAME_VALUE = 0x08,
    CFA_REGISTER = 0x09,
    CFA_REMEMBER_STATE = 0x0a,
    CFA_RESTORE_STATE = 0x0b,
    CFA_DEF_CFA = 0x0c,
    CFA_DEF_CFA_REGISTER = 0x0d,
    CFA_DEF_CFA_OFFSET = 0x0e,
    CFA_DEF_CFA_EXPRESSION = 0x0f,
    CFA_EXPRESSION = 0x10,
    CFA_OFFSET_EXTENDED_SF = 0x11,
    CFA_DEF_CFA_SF = 0x12,
    CFA_DEF_CFA_OFFSET_SF = 0x13,
    CFA_VAL_OFFSET = 0x14,
    CFA_VAL_OFFSET_SF = 0x15,
    CFA_VAL_EXPRESSION = 0x16,
    CFA_GNU_WINDOW_SAVE = 0x2d,
    CFA_GNU_ARGS_SIZE = 0x2e,
    CFA_GNU_NEGATIVE_OFFSET_EXTENDED = 0x2f,
};

/* Size in bytes of a pointer encoding's value format (0: LEB128). -1: bad. */
static int encoded_size(uint8_t enc, unsigned address_size)
{
    switch (enc & 0x0f) {
    case PE_ABSPTR: return (int)address_size;
    case PE_UDATA2:
    case PE_SDATA2: return 2;
    case PE_UDATA4:
    case PE_SDATA4: return 4;
    case PE_UDATA8:
    case PE_SDATA8: return 8;
    case PE_ULEB128:
    case PE_SLEB128: return 0;
    default: return -1;
    }
}

/* Read a value in encoding `enc`'s format (no application). */
static int64_t read_encoded_value(jft_reader *r, uint8_t enc, unsigned address_size)
{
    switch (enc & 0x0f) {
    case PE_ABSPTR: return address_size == 4 ? (int64_t)jft_u32(r) : (int64_t)jft_u64(r);
    case PE_ULEB128: return (int64_t)jft_uleb128(r);
    case PE_UDATA2: return jft_u16(r);
    case PE_UDATA4: return jft_u32(r);
    case PE_UDATA8: return (int64_t)jft_u64(r);
    case PE_SLEB128: return jft_sleb128(r);
    case PE_SDATA2: return (int16_t)jft_u16(r);
    case PE_SDATA4: return (int32_t)jft_u32(r);
    default: return (int64_t)jft_u64(r); /* PE_SDATA8 */
    }
}

/* Check that `enc` is usable for an FDE pointer here (abs or pc-relative). */
static int check_pointer_encoding(uint8_t enc, const ehf_layout *l, uint64_t where, const char *what,
                                  jft_error *err)
{
    if (encoded_size(enc, l->address_size) < 0)
        return jft_fail(err, where, "%s encoding 0x%02x has an unknown value format", what, enc);
    if (enc & PE_INDIRECT)
        return jft_fail(err, where, "%s encoding 0x%02x is indirect", what, enc);
    if ((enc & 0x70) != 0 && (enc & 0x70) != PE_PCREL)
        return jft_fail(err, where, "%s encoding 0x%02x is neither absolute nor pc-relative", what, enc);
    return 0;
}

/* ---- CIE ----------------------------------------------------------------- */

static int parse_augmentation_data(jft_reader *r, ehf_cie *c, const ehf_layout *l, uint64_t base,
                                   jft_error *err)
{
    for (const char *a = c->augmentation + 1; *a; a++) {
        uint64_t where = base + r->pos;
        switch (*a) {
        case 'R':
            c->fde_encoding = jft_u8(r);
            if (check_pointer_encoding(c->fde_encoding, l, where, "CIE 'R' (FDE pointer)", err))
                return -1;
            break;
        case 'L': c->lsda_encoding = jft_u8(r); break;
        case 'P': {
            uint8_t enc = jft_u8(r);
            if (encoded_size(enc, l->address_size) < 0)
                return jft_fail(err, where, "personality encoding 0x%02x is unknown", enc);
            read_encoded_value(r, enc, l->address_size);
            break;
        }
        case 'S': c->signal_frame = 1; break;
        case 'B': /* aarch64 BTI-protected frames: no data */
        case 'G': /* aarch64 MTE-tagged frames: no data */ break;
        default: return jft_fail(err, where, "unknown CIE augmentation character '%c'", *a);
        }
    }
    return 0;
}

/* Parse a CIE whose body (after the 4-byte length and the CIE id) is r. */
static int parse_cie(jft_reader *r, ehf_cie *c, const ehf_layout *l, uint64_t base, jft_error *err)
{
    c->version = jft_u8(r);
    if (c->version != 1 && c->version != 3)
        return jft_fail(err, base + c->offset + 8, "CIE version %u (expected 1 or 3)", c->version);
    size_t i = 0;
    for (uint8_t ch; (ch = jft_u8(r)) != 0 && !r->overrun; i++) {
        if (i + 1 >= sizeof c->augmentation)
            return jft_fail(err, base + c->offset + 9, "CIE augmentation string too long");
        c->augmentation[i] = (char)ch;
    }
    c->augmentation[i] = '\0';
    if (i > 0 && c->augmentation[0] != 'z')
        return jft_fail(err, base + c->offset + 9, "CIE augmentation \"%s\" does not start with 'z'",
                        c->augmentation);
    c->code_align = jft_uleb128(r);
    c->data_align = jft_sleb128(r);
    c->ra_reg = c->version == 1 ? jft_u8(r) : jft_uleb128(r);
    if (r->overrun)
        return jft_fail(err, base + c->offset, "CIE truncated in its fixed fields");
    if (c->code_align == 0)
        return jft_fail(err, base + c->offset, "CIE code alignment factor is 0");
    if (c->ra_reg >= EHF_MAX_REGS)
        return jft_fail(err, base + c->offset, "CIE return address register %llu out of range",
                        (unsigned long long)c->ra_reg);
    c->fde_encoding = PE_ABSPTR;
    c->lsda_encoding = PE_OMIT;
    if (i > 0) {
        uint64_t aug_len = jft_uleb128(r);
        size_t aug_start = r->pos;
        if (r->overrun || aug_len > jft_left(r))
            return jft_fail(err, base + c->offset, "CIE augmentation data runs past the CIE");
        jft_reader aug;
        jft_reader_init(&aug, r->data, aug_start + aug_len, r->big_endian);
        aug.pos = aug_start;
        if (parse_augmentation_data(&aug, c, l, base, err))
            return -1;
        if (aug.overrun || aug.pos != aug_start + aug_len)
            return jft_fail(err, base + aug_start,
                            "CIE augmentation data length %llu does not match its contents",
                            (unsigned long long)aug_len);
        r->pos = aug_start + aug_len;
    }
    c->insns = r->pos;
    c->insns_size = jft_left(r);
    return 0;
}

/* ---- FDE ----------------------------------------------------------------- */

static int parse_fde(jft_reader *r, ehf_fde *f, const ehf_cie *c, const ehf_layout *l, uint64_t base,
                     jft_error *err)
{
    uint8_t enc = c->fde_encoding;
    f->pc_begin_field = r->pos;
    int64_t begin = read_encoded_value(r, enc, l->address_size);
    uint64_t range = (uint64_t)read_encoded_value(r, (uint8_t)(enc & 0x0f), l->address_size);
    if (enc & 0x0f) {
        /* Narrow formats: the range is unsigned whatever the signedness. */
        int size = encoded_size(enc, l->address_size);
        if (size > 0 && size < 8)
            range &= ((uint64_t)1 << (8 * size)) - 1;
    }
    if (r->overrun)
        return jft_fail(err, base + f->offset, "FDE truncated in pc_begin/pc_range");
    f->pc_begin = begin;
    if ((enc & 0x70) == PE_PCREL)
        f->pc_begin = (int64_t)((uint64_t)l->section_addr + f->pc_begin_field + (uint64_t)begin);
    f->pc_range = range;
    int64_t end;
    if (range == 0)
        return jft_fail(err, base + f->offset, "FDE covers no code (pc_range 0)");
    if (range > INT64_MAX || __builtin_add_overflow(f->pc_begin, (int64_t)range, &end))
        return jft_fail(err, base + f->offset, "FDE range overflows the address space");
    if (c->augmentation[0] == 'z') {
        uint64_t aug_len = jft_uleb128(r);
        if (r->overrun || aug_len > jft_left(r) || !jft_skip(r, (size_t)aug_len))
            return jft_fail(err, base + f->offset, "FDE augmentation data runs past the FDE");
    }
    f->insns = r->pos;
    f->insns_size = jft_left(r);
    return 0;
}

/* ---- the CFA interpreter ------------------------------------------------- */

typedef struct cfa_state {
    int cfa_is_expression;
    uint64_t cfa_reg;
    int64_t cfa_offset;
    ehf_rule regs[EHF_MAX_REGS];
} cfa_state;

typedef struct interp {
    const ehf_layout *layout;
    const ehf_cie *cie;
    const ehf_fde *fde; /* NULL while running the CIE's initial instructions */
    int64_t loc, end;
    cfa_state cur, initial;
    cfa_state stack[EHF_MAX_STATE_DEPTH];
    int depth;
    ehf_row_fn fn;
    void *ctx;
    ehf_row row;
    jft_error *err;
} interp;

static void emit_row(interp *in, int64_t until)
{
    if (!in->fn || !in->fde || until <= in->loc)
        return;
    in->row.start = in->loc;
    in->row.end = until;
    in->row.cfa_is_expression = in->cur.cfa_is_expression;
    in->row.cfa_reg = in->cur.cfa_reg;
    in->row.cfa_offset = in->cur.cfa_offset;
    memcpy(in->row.regs, in->cur.regs, sizeof in->row.regs);
    in->fn(in->ctx, in->fde, &in->row);
}

static int advance(interp *in, uint64_t delta, uint64_t where)
{
    if (!in->fde)
        return jft_fail(in->err, where, "location advance in a CIE's initial instructions");
    uint64_t bytes = delta * in->cie->code_align;
    if (in->cie->code_align && bytes / in->cie->code_align != delta)
        return jft_fail(in->err, where, "location advance overflows");
    if (bytes > (uint64_t)(in->end - in->loc))
        return jft_fail(in->err, where, "advance by %llu moves past the end of the FDE's range",
                        (unsigned long long)bytes);
    emit_row(in, in->loc + (int64_t)bytes);
    in->loc += (int64_t)bytes;
    return 0;
}

static int check_reg(interp *in, uint64_t reg, uint64_t where)
{
    if (reg >= EHF_MAX_REGS)
        return jft_fail(in->err, where, "register %llu out of range", (unsigned long long)reg);
    return 0;
}

static int set_rule(interp *in, uint64_t reg, uint8_t kind, int64_t value, uint64_t where)
{
    if (check_reg(in, reg, where))
        return -1;
    in->cur.regs[reg].kind = kind;
    in->cur.regs[reg].value = value;
    return 0;
}

static int restore_rule(interp *in, uint64_t reg, uint64_t where)
{
    if (!in->fde)
        return jft_fail(in->err, where, "DW_CFA_restore in a CIE's initial instructions");
    if (check_reg(in, reg, where))
        return -1;
    in->cur.regs[reg] = in->initial.regs[reg];
    return 0;
}

static int skip_block(jft_reader *r)
{
    uint64_t n = jft_uleb128(r);
    if (r->overrun || n > jft_left(r)) {
        r->overrun = 1;
        return -1;
    }
    jft_skip(r, (size_t)n);
    return 0;
}

static int needs_register_cfa(interp *in, uint64_t where, const char *op)
{
    if (in->cur.cfa_is_expression)
        return jft_fail(in->err, where, "%s while the CFA is an expression", op);
    return 0;
}

/* Arithmetic on values read from the input wraps instead of overflowing
 * (garbage in, garbage rules out, but never undefined behaviour). */
static int64_t wrap_add(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a + (uint64_t)b);
}

static int64_t factored(interp *in, int64_t v)
{
    return (int64_t)((uint64_t)v * (uint64_t)in->cie->data_align);
}

/* Execute one instruction (the opcode is already read). */
static int execute(interp *in, jft_reader *r, uint8_t op, uint64_t where)
{
    uint8_t low = op & 0x3f;
    uint64_t reg;
    switch (op & 0xc0) {
    case CFA_ADVANCE_LOC: return advance(in, low, where);
    case CFA_OFFSET: return set_rule(in, low, EHF_RULE_OFFSET, factored(in, (int64_t)jft_uleb128(r)), where);
    case CFA_RESTORE: return restore_rule(in, low, where);
    default: break;
    }
    switch (op) {
    case CFA_NOP: return 0;
    case CFA_SET_LOC: {
        int64_t target = read_encoded_value(r, in->cie->fde_encoding, in->layout->address_size);
        if (!in->fde)
            return jft_fail(in->err, where, "DW_CFA_set_loc in a CIE's initial instructions");
        if ((in->cie->fde_encoding & 0x70) == PE_PCREL)
            target = wrap_add(target,
                              in->layout->section_addr + (int64_t)(where - in->layout->error_base) + 1);
        if (target < in->loc || target > in->end)
            return jft_fail(in->err, where, "DW_CFA_set_loc outside the FDE or backwards");
        emit_row(in, target);
        in->loc = target;
        return 0;
    }
    case CFA_ADVANCE_LOC1: return advance(in, jft_u8(r), where);
    case CFA_ADVANCE_LOC2: return advance(in, jft_u16(r), where);
    case CFA_ADVANCE_LOC4: return advance(in, jft_u32(r), where);
    case CFA_OFFSET_EXTENDED:
        reg = jft_uleb128(r);
        return set_rule(in, reg, EHF_RULE_OFFSET, factored(in, (int64_t)jft_uleb128(r)), where);
    case CFA_RESTORE_EXTENDED: return restore_rule(in, jft_uleb128(r), where);
    case CFA_UNDEFINED: return set_rule(in, jft_uleb128(r), EHF_RULE_UNDEFINED, 0, where);
    case CFA_SAME_VALUE: return set_rule(in, jft_uleb128(r), EHF_RULE_SAME_VALUE, 0, where);
    case CFA_REGISTER: {
        reg = jft_uleb128(r);
        uint64_t other = jft_uleb128(r);
        if (check_reg(in, other, where))
            return -1;
        return set_rule(in, reg, EHF_RULE_REGISTER, (int64_t)other, where);
    }
    case CFA_REMEMBER_STATE:
        if (in->depth == EHF_MAX_STATE_DEPTH)
            return jft_fail(in->err, where, "DW_CFA_remember_state nested deeper than %d",
                            EHF_MAX_STATE_DEPTH);
        in->stack[in->depth++] = in->cur;
        return 0;
    case CFA_RESTORE_STATE:
        if (in->depth == 0)
            return jft_fail(in->err, where, "DW_CFA_restore_state without a remembered state");
        in->cur = in->stack[--in->depth];
        return 0;
    case CFA_DEF_CFA:
    case CFA_DEF_CFA_SF:
        reg = jft_uleb128(r);
        if (check_reg(in, reg, where))
            return -1;
        in->cur.cfa_is_expression = 0;
        in->cur.cfa_reg = reg;
        in->cur.cfa_offset = op == CFA_DEF_CFA ? (int64_t)jft_uleb128(r) : factored(in, jft_sleb128(r));
        return 0;
    case CFA_DEF_CFA_REGISTER:
        reg = jft_uleb128(r);
        if (needs_register_cfa(in, where, "DW_CFA_def_cfa_register") || check_reg(in, reg, where))
            return -1;
        in->cur.cfa_reg = reg;
        return 0;
    case CFA_DEF_CFA_OFFSET:
    case CFA_DEF_CFA_OFFSET_SF:
        if (needs_register_cfa(in, where, "DW_CFA_def_cfa_offset"))
            return -1;
        in->cur.cfa_offset = op == CFA_DEF_CFA_OFFSET ? (int64_t)jft_uleb128(r)
                                                      : factored(in, jft_sleb128(r));
        return 0;
    case CFA_DEF_CFA_EXPRESSION:
        in->cur.cfa_is_expression = 1;
        return skip_block(r) ? jft_fail(in->err, where, "truncated DW_CFA_def_cfa_expression") : 0;
    case CFA_EXPRESSION:
    case CFA_VAL_EXPRESSION:
        reg = jft_uleb128(r);
        if (skip_block(r))
            return jft_fail(in->err, where, "truncated expression");
        return set_rule(in, reg, op == CFA_EXPRESSION ? EHF_RULE_EXPRESSION : EHF_RULE_VAL_EXPRESSION, 0,
                        where);
    case CFA_OFFSET_EXTENDED_SF:
        reg = jft_uleb128(r);
        return set_rule(in, reg, EHF_RULE_OFFSET, factored(in, jft_sleb128(r)), where);
    case CFA_VAL_OFFSET:
        reg = jft_uleb128(r);
        return set_rule(in, reg, EHF_RULE_VAL_OFFSET, factored(in, (int64_t)jft_uleb128(r)), where);
    case CFA_VAL_OFFSET_SF:
        reg = jft_uleb128(r);
        return set_rule(in, reg, EHF_RULE_VAL_OFFSET, factored(in, jft_sleb128(r)), where);
    case CFA_GNU_WINDOW_SAVE: /* aarch64: DW_CFA_AARCH64_negate_ra_state */ return 0;
    case CFA_GNU_ARGS_SIZE: jft_uleb128(r); return 0;
    case CFA_GNU_NEGATIVE_OFFSET_EXTENDED:
        reg = jft_uleb128(r);
        return set_rule(in, reg, EHF_RULE_OFFSET,
                        (int64_t)(0 - (uint64_t)factored(in, (int64_t)jft_uleb128(r))), where);
    default: return jft_fail(in->err, where, "unknown CFA instruction 0x%02x", op);
    }
}

/* Run the instructions at section offsets [start, start + size). */
static int run_program(interp *in, const uint8_t *data, uint64_t start, uint64_t size)
{
    jft_reader r;
    jft_reader_init(&r, data, (size_t)(start + size), in->layout->big_endian);
    r.pos = (size_t)start;
    while (jft_left(&r) > 0) {
        uint64_t where = in->layout->error_base + r.pos;
        uint8_t op = jft_u8(&r);
        if (execute(in, &r, op, where))
            return -1;
        if (r.overrun)
            return jft_fail(in->err, where, "CFA instruction 0x%02x runs past the end of its entry", op);
    }
    return 0;
}

static int interpret(const uint8_t *data, const ehf_layout *l, const ehf_cie *c, const ehf_fde *f,
                     ehf_row_fn fn, void *ctx, jft_error *err)
{
    interp *in = calloc(1, sizeof *in);
    if (!in)
        return jft_fail(err, l->error_base, "out of memory");
    in->layout = l;
    in->cie = c;
    in->err = err;
    in->fn = fn;
    in->ctx = ctx;
    int rc = run_program(in, data, c->insns, c->insns_size);
    if (rc == 0 && in->depth != 0)
        rc = jft_fail(err, l->error_base + c->offset, "CIE leaves %d remembered states", in->depth);
    if (rc == 0 && f) {
        in->initial = in->cur;
        in->fde = f;
        in->loc = f->pc_begin;
        in->end = f->pc_begin + (int64_t)f->pc_range;
        rc = run_program(in, data, f->insns, f->insns_size);
        if (rc == 0)
            emit_row(in, in->end);
    }
    free(in);
    return rc;
}

/* ---- the section --------------------------------------------------------- */

static int push(void **items, size_t *n, size_t size, const void *item)
{
    if (*n == 0 || (*n >= 4 && (*n & (*n - 1)) == 0)) { /* capacity 4, 8, 16... */
        void *bigger = realloc(*items, (*n ? *n * 2 : 4) * size);
        if (!bigger)
            return -1;
        *items = bigger;
    }
    memcpy((char *)*items + *n * size, item, size);
    (*n)++;
    return 0;
}

static int find_cie(const ehf_table *t, uint64_t offset, size_t *index)
{
    for (size_t i = t->n_cies; i-- > 0;)
        if (t->cies[i].offset == offset) {
            *index = i;
            return 0;
        }
    return -1;
}

static int rest_is_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

/* Decode one CIE or FDE at `offset` whose length word says `length`. */
static int decode_entry(const uint8_t *data, uint64_t offset, uint32_t length, const ehf_layout *l,
                        ehf_table *t, jft_error *err)
{
    uint64_t base = l->error_base;
    jft_reader r;
    jft_reader_init(&r, data, (size_t)(offset + 4 + length), l->big_endian);
    r.pos = (size_t)offset + 4;
    uint64_t id_field = r.pos;
    uint32_t id = jft_u32(&r);
    if (r.overrun)
        return jft_fail(err, base + offset, "entry too short for its CIE id / CIE pointer");
    if (id == 0) {
        ehf_cie c = {0};
        c.offset = offset;
        c.size = 4 + (uint64_t)length;
        if (parse_cie(&r, &c, l, base, err))
            return -1;
        if (interpret(data, l, &c, NULL, NULL, NULL, err))
            return -1;
        if (push((void **)&t->cies, &t->n_cies, sizeof c, &c))
            return jft_fail(err, base + offset, "out of memory");
        return 0;
    }
    ehf_fde f = {0};
    f.offset = offset;
    f.size = 4 + (uint64_t)length;
    if (id > id_field || find_cie(t, id_field - id, &f.cie))
        return jft_fail(err, base + id_field, "FDE's CIE pointer %u does not lead back to a CIE before it",
                        id);
    if (parse_fde(&r, &f, &t->cies[f.cie], l, base, err))
        return -1;
    if (interpret(data, l, &t->cies[f.cie], &f, NULL, NULL, err))
        return -1;
    if (push((void **)&t->fdes, &t->n_fdes, sizeof f, &f))
        return jft_fail(err, base + offset, "out of memory");
    return 0;
}

int ehf_decode(const uint8_t *data, size_t len, const ehf_layout *l, ehf_table *out, jft_error *err)
{
    memset(out, 0, sizeof *out);
    uint64_t base = l->error_base;
    size_t pos = 0;
    while (pos < len) {
        jft_reader r;
        jft_reader_init(&r, data, len, l->big_endian);
        r.pos = pos;
        uint32_t length = jft_u32(&r);
        if (r.overrun)
            return jft_fail(err, base + pos, "%zu stray bytes at the end of .eh_frame", len - pos);
        if (length == 0) {
            out->terminated = 1;
            if (!rest_is_zero(data + pos + 4, len - pos - 4))
                return jft_fail(err, base + pos + 4, "data after the .eh_frame zero terminator");
            return 0;
        }
        if (length == 0xffffffffu)
            return jft_fail(err, base + pos, "64-bit DWARF entry length (not supported)");
        if (!jft_fits(pos + 4, length, len))
            return jft_fail(err, base + pos,
                            "entry length %u runs past the end of .eh_frame (%zu bytes left)", length,
                            len - pos - 4);
        /* DWARF asks for address-size multiples in .debug_frame; .eh_frame
         * writers (gas on aarch64, for one) pad to 4, which every reader takes. */
        if ((4 + (uint64_t)length) % 4)
            return jft_fail(err, base + pos, "entry size %llu is not a multiple of 4",
                            (unsigned long long)(4 + (uint64_t)length));
        if (decode_entry(data, pos, length, l, out, err))
            return -1;
        pos += 4 + (size_t)length;
    }
    return 0;
}

void ehf_free(ehf_table *t)
{
    free(t->cies);
    free(t->fdes);
    memset(t, 0, sizeof *t);
}

int ehf_rows(const uint8_t *data, size_t len, const ehf_layout *l, const ehf_table *t, size_t i,
             ehf_row_fn fn, void *ctx, jft_error *err)
{
    (void)len;
    if (i >= t->n_fdes)
        return jft_fail(err, l->error_base, "no FDE %zu", i);
    const ehf_fde *f = &t->fdes[i];
    return interpret(data, l, &t->cies[f->cie], f, fn, ctx, err);
}

/* ---- .eh_frame_hdr ------------------------------------------------------- */

static int check_hdr_encodings(jft_reader *r, uint64_t base, jft_error *err)
{
    uint8_t version = jft_u8(r), ptr_enc = jft_u8(r), count_enc = jft_u8(r), table_enc = jft_u8(r);
    if (r->overrun)
        return jft_fail(err, base, ".eh_frame_hdr shorter than its 4-byte header");
    if (version != 1)
        return jft_fail(err, base, ".eh_frame_hdr version %u (expected 1)", version);
    if (ptr_enc != (PE_PCREL | PE_SDATA4))
        return jft_fail(err, base + 1, ".eh_frame_hdr eh_frame_ptr encoding 0x%02x (expected 0x1b)", ptr_enc);
    if (count_enc != PE_UDATA4)
        return jft_fail(err, base + 2, ".eh_frame_hdr fde_count encoding 0x%02x (expected 0x03)", count_enc);
    if (table_enc != (PE_DATAREL | PE_SDATA4))
        return jft_fail(err, base + 3, ".eh_frame_hdr table encoding 0x%02x (expected 0x3b)", table_enc);
    return 0;
}

static int find_fde_at(const ehf_table *t, uint64_t offset, size_t *index)
{
    for (size_t i = 0; i < t->n_fdes; i++)
        if (t->fdes[i].offset == offset) {
            *index = i;
            return 0;
        }
    return -1;
}

static int check_hdr_row(const ehf_table *t, int64_t hdr_addr, const ehf_layout *l, int64_t loc,
                         int64_t fde_ptr, uint64_t where, uint8_t *used, jft_error *err)
{
    int64_t fde_offset = hdr_addr + fde_ptr - l->section_addr;
    size_t i;
    if (fde_offset < 0 || find_fde_at(t, (uint64_t)fde_offset, &i))
        return jft_fail(err, where, ".eh_frame_hdr row points at .eh_frame offset %lld, which is not an FDE",
                        (long long)fde_offset);
    if (used[i]++)
        return jft_fail(err, where, ".eh_frame_hdr lists the FDE at offset %lld twice",
                        (long long)fde_offset);
    if (hdr_addr + loc != t->fdes[i].pc_begin)
        return jft_fail(err, where,
                        ".eh_frame_hdr row says the FDE at offset %lld starts at %lld, the FDE says %lld",
                        (long long)fde_offset, (long long)(hdr_addr + loc), (long long)t->fdes[i].pc_begin);
    return 0;
}

int ehf_check_hdr(const uint8_t *hdr, size_t len, int64_t hdr_addr, const ehf_layout *l, const ehf_table *t,
                  uint64_t base, jft_error *err)
{
    jft_reader r;
    jft_reader_init(&r, hdr, len, l->big_endian);
    if (check_hdr_encodings(&r, base, err))
        return -1;
    int64_t eh_frame_ptr = (int32_t)jft_u32(&r);
    uint32_t count = jft_u32(&r);
    if (r.overrun)
        return jft_fail(err, base, ".eh_frame_hdr shorter than 12 bytes");
    if (hdr_addr + 4 + eh_frame_ptr != l->section_addr)
        return jft_fail(err, base + 4,
                        ".eh_frame_hdr eh_frame_ptr %lld does not point at .eh_frame (expected %lld)",
                        (long long)eh_frame_ptr, (long long)(l->section_addr - hdr_addr - 4));
    if (count != t->n_fdes)
        return jft_fail(err, base + 8, ".eh_frame_hdr fde_count %u but .eh_frame has %zu FDEs", count,
                        t->n_fdes);
    if (len != 12 + 8 * (uint64_t)count)
        return jft_fail(err, base, ".eh_frame_hdr is %zu bytes, expected %llu for %u rows", len,
                        (unsigned long long)(12 + 8 * (uint64_t)count), count);
    uint8_t *used = calloc(count + 1, 1);
    if (!used)
        return jft_fail(err, base, "out of memory");
    int64_t prev = INT64_MIN;
    int rc = 0;
    for (uint32_t i = 0; i < count && rc == 0; i++) {
        uint64_t where = base + r.pos;
        int64_t loc = (int32_t)jft_u32(&r), fde_ptr = (int32_t)jft_u32(&r);
        if (i > 0 && loc <= prev)
            rc = jft_fail(err, where, ".eh_frame_hdr row %u is not sorted by initial location", i);
        else
            rc = check_hdr_row(t, hdr_addr, l, loc, fde_ptr, where, used, err);
        prev = loc;
    }
    free(used);
    return rc;
}

/* ---- register names ------------------------------------------------------ */

static const char *const x86_64_regs[] = {"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8",
                                          "r9",  "r10", "r11", "r12", "r13", "r14", "r15", "rip"};
static const char *const riscv_regs[] = {"zero", "ra", "sp", "gp", "tp",  "t0",  "t1", "t2", "s0", "s1", "a0",
                                         "a1",   "a2", "a3", "a4", "a5",  "a6",  "a7", "s2", "s3", "s4", "s5",
                                         "s6",   "s7", "s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6"};
static const char *const aarch64_regs[] = {"x0",  "x1",  "x2",  "x3",  "x4",  "x5",  "x6",  "x7",
                                           "x8",  "x9",  "x10", "x11", "x12", "x13", "x14", "x15",
                                           "x16", "x17", "x18", "x19", "x20", "x21", "x22", "x23",
                                           "x24", "x25", "x26", "x27", "x28", "x29", "x30", "sp"};

const char *ehf_register_name(uint32_t elf_mach, uint64_t reg)
{
    switch (elf_mach) {
    case 62: return reg < 17 ? x86_64_regs[reg] : NULL;
    case 183: return reg < 32 ? aarch64_regs[reg] : NULL;
    case 243: return reg < 32 ? riscv_regs[reg] : NULL;
    default: return NULL;
    }
}
