/*
 * ELF64 symfiles for the GDB JIT interface. gdb and lldb read these from our
 * memory; they only need to know where code is, what it is called, how to
 * unwind it and which source lines it came from, so the code itself is never
 * copied: .text is SHT_NOBITS at the real address.
 *
 * The image is written in two passes over the same function: the first, over
 * a NULL buffer, measures (reserving each region's worst-case CFI size); the
 * second writes into one allocation that never moves, because the .eh_frame
 * bytes are emitted with absolute addresses of where they live.
 *
 * File layout: ELF header, program headers, .symtab, .strtab, DWARF
 * sections, .shstrtab, .eh_frame, section headers.
 */
#define _GNU_SOURCE
#include "elf_image.h"

#include "arch/host.h"
#include "byte_writer.h"
#include "cfi.h"
#include "error.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* ELF (System V gABI) */
enum {
    ELFCLASS64 = 2,
    ELFDATA2LSB = 1,
    ELFDATA2MSB = 2,
    EV_CURRENT = 1,
    ET_REL = 1,
    SHT_PROGBITS = 1,
    SHT_SYMTAB = 2,
    SHT_STRTAB = 3,
    SHT_NOBITS = 8,
    SHF_ALLOC = 0x2,
    SHF_EXECINSTR = 0x4,
    PT_LOAD = 1,
    PF_X = 0x1,
    PF_R = 0x4,
    STB_GLOBAL = 1,
    STT_FUNC = 2,
    EHDR_SIZE = 64,
    PHDR_SIZE = 56,
    SHDR_SIZE = 64,
    SYM_SIZE = 24,
};

#define HOST_MACHINE JF_HOST_ELF_MACHINE
#define HOST_FLAGS JF_HOST_ELF_FLAGS

/* DWARF 4 */
enum {
    DW_TAG_compile_unit = 0x11,
    DW_TAG_subprogram = 0x2e,
    DW_CHILDREN_no = 0,
    DW_CHILDREN_yes = 1,
    DW_AT_name = 0x03,
    DW_AT_stmt_list = 0x10,
    DW_AT_low_pc = 0x11,
    DW_AT_high_pc = 0x12,
    DW_AT_language = 0x13,
    DW_AT_producer = 0x25,
    DW_AT_external = 0x3f,
    DW_FORM_addr = 0x01,
    DW_FORM_data2 = 0x05,
    DW_FORM_data8 = 0x07,
    DW_FORM_string = 0x08,
    DW_FORM_sec_offset = 0x17,
    DW_FORM_flag_present = 0x19,
    DW_LANG_C99 = 0x0c,
    DW_LNS_copy = 0x01,
    DW_LNS_advance_pc = 0x02,
    DW_LNS_advance_line = 0x03,
    DW_LNS_set_file = 0x04,
    DW_LNE_end_sequence = 0x01,
    DW_LNE_set_address = 0x02,
    LINE_BASE = -5,
    LINE_RANGE = 14,
    OPCODE_BASE = 13,
    ABBREV_CU = 1,
    ABBREV_SUBPROGRAM = 2,
};

/* Sections other than the .text ones, in section-header order. */
enum section_kind { SEC_EH, SEC_ABBREV, SEC_INFO, SEC_LINE, SEC_SYMTAB, SEC_STRTAB, SEC_SHSTRTAB, SEC_KINDS };

static const char *const section_names[SEC_KINDS] = {
    ".eh_frame", ".debug_abbrev", ".debug_info", ".debug_line", ".symtab", ".strtab", ".shstrtab",
};

typedef struct section {
    uint32_t name; /* offset in .shstrtab */
    uint32_t type;
    uint64_t flags;
    uint64_t addr;
    uint64_t offset;
    uint64_t size;
    uint32_t link;
    uint32_t info;
    uint64_t align;
    uint64_t entsize;
} section;

typedef struct builder {
    jf__live *const *regions;
    size_t n;
    const jf__elf_span *spans;
    size_t n_spans;
    uint16_t index[SEC_KINDS]; /* section index, 0 when absent */
    uint16_t shnum;
    section sec[SEC_KINDS];
    uint32_t text_name;     /* ".text" in .shstrtab, then ".text.1", ".text.2"... */
    uint64_t *line_offsets; /* per region: its line program in .debug_line */
    const char **files;     /* scratch: one region's file table */
} builder;

/* ---- source lines ------------------------------------------------------ */

/* A region's line rows: its table, or the single row its (file, line) gives. */
static size_t region_rows(const jf__live *r, jf_line *one, const jf_line **rows)
{
    const jf__live_detail *d = jf__live_about(r);
    if (d->n_lines) {
        *rows = d->lines;
        return d->n_lines;
    }
    if (d->file && d->line) {
        one->offset = 0;
        one->line = d->line;
        one->file = NULL;
        *rows = one;
        return 1;
    }
    return 0;
}

static int region_has_lines(const jf__live *r)
{
    const jf__live_detail *d = jf__live_about(r);
    return d->n_lines > 0 || (d->file && d->line);
}

static const char *row_file(const jf__live *r, const jf_line *row)
{
    return row->file ? row->file : jf__live_about(r)->file;
}

/* The compile unit's name: the region's file, else its first row's. */
static const char *unit_name(const jf__live *r)
{
    const jf__live_detail *d = jf__live_about(r);
    return d->file ? d->file : row_file(r, &d->lines[0]);
}

/* 1-based index of `file` in files[0..n), appending it if new. */
static size_t file_index(const char **files, size_t *n, const char *file)
{
    for (size_t i = *n; i > 0; i--)
        if (strcmp(files[i - 1], file) == 0)
            return i;
    files[(*n)++] = file;
    return *n;
}

static void put_line_header(jf__writer *w, const char **files, size_t n_files)
{
    static const uint8_t standard_opcode_lengths[OPCODE_BASE - 1] = {0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1};
    jf__put_u8(w, 1); /* minimum_instruction_length */
    jf__put_u8(w, 1); /* maximum_operations_per_instruction */
    jf__put_u8(w, 1); /* default_is_stmt */
    jf__put_u8(w, (uint8_t)(int8_t)LINE_BASE);
    jf__put_u8(w, LINE_RANGE);
    jf__put_u8(w, OPCODE_BASE);
    jf__put_bytes(w, standard_opcode_lengths, sizeof standard_opcode_lengths);
    jf__put_u8(w, 0); /* no include_directories */
    for (size_t i = 0; i < n_files; i++) {
        jf__put_cstr(w, files[i]);
        jf__put_uleb128(w, 0); /* directory */
        jf__put_uleb128(w, 0); /* mtime */
        jf__put_uleb128(w, 0); /* length */
    }
    jf__put_u8(w, 0);
}

static void put_line_rows(jf__writer *w, const jf__live *r, const jf_line *rows, size_t n_rows,
                          const char **files, size_t *n_files)
{
    jf__put_u8(w, 0);
    jf__put_uleb128(w, 9);
    jf__put_u8(w, DW_LNE_set_address);
    jf__put_u64(w, r->start);
    size_t file = 1, offset = 0;
    int64_t line = 1;
    for (size_t k = 0; k < n_rows; k++) {
        size_t f = file_index(files, n_files, row_file(r, &rows[k]));
        if (f != file) {
            jf__put_u8(w, DW_LNS_set_file);
            jf__put_uleb128(w, f);
            file = f;
        }
        if ((int64_t)rows[k].line != line) {
            jf__put_u8(w, DW_LNS_advance_line);
            jf__put_sleb128(w, (int64_t)rows[k].line - line);
            line = rows[k].line;
        }
        if (rows[k].offset > offset) {
            jf__put_u8(w, DW_LNS_advance_pc);
            jf__put_uleb128(w, rows[k].offset - offset);
            offset = rows[k].offset;
        }
        jf__put_u8(w, DW_LNS_copy);
    }
    /* The sequence ends after the region's last byte, so the last row's
     * range reaches the end of the code. */
    jf__put_u8(w, DW_LNS_advance_pc);
    jf__put_uleb128(w, r->size - offset);
    jf__put_u8(w, 0);
    jf__put_uleb128(w, 1);
    jf__put_u8(w, DW_LNE_end_sequence);
}

/* One DWARF 4 line program for region r. files: scratch for its file table. */
static void put_line_program(jf__writer *w, const jf__live *r, const char **files)
{
    jf_line one;
    const jf_line *rows = NULL;
    size_t n_rows = region_rows(r, &one, &rows);
    /* The file table: the unit's own file first, then every row's. */
    size_t n_files = 0;
    file_index(files, &n_files, unit_name(r));
    for (size_t k = 0; k < n_rows; k++)
        file_index(files, &n_files, row_file(r, &rows[k]));

    size_t unit_start = w->pos;
    jf__put_u32(w, 0); /* unit_length, patched below */
    jf__put_u16(w, 4);
    size_t header_length_at = w->pos;
    jf__put_u32(w, 0);
    size_t header_start = w->pos;
    put_line_header(w, files, n_files);
    jf__patch_u32(w, header_length_at, (uint32_t)(w->pos - header_start));
    put_line_rows(w, r, rows, n_rows, files, &n_files);
    jf__patch_u32(w, unit_start, (uint32_t)(w->pos - unit_start - 4));
}

static void put_abbrevs(jf__writer *w)
{
    static const uint8_t abbrevs[] = {
        ABBREV_CU,
        DW_TAG_compile_unit,
        DW_CHILDREN_yes,
        DW_AT_producer,
        DW_FORM_string,
        DW_AT_language,
        DW_FORM_data2,
        DW_AT_name,
        DW_FORM_string,
        DW_AT_low_pc,
        DW_FORM_addr,
        DW_AT_high_pc,
        DW_FORM_data8,
        DW_AT_stmt_list,
        DW_FORM_sec_offset,
        0,
        0,
        ABBREV_SUBPROGRAM,
        DW_TAG_subprogram,
        DW_CHILDREN_no,
        DW_AT_name,
        DW_FORM_string,
        DW_AT_external,
        DW_FORM_flag_present,
        DW_AT_low_pc,
        DW_FORM_addr,
        DW_AT_high_pc,
        DW_FORM_data8,
        0,
        0,
        0,
    };
    jf__put_bytes(w, abbrevs, sizeof abbrevs);
}

/*
 * A region is named by one FUNC symbol (and, with lines, one subprogram) per
 * part, a part starting at the region's start and at every later FDE that
 * begins in the entry state (the CIE's initial row): a region whose code
 * enters separate functions there. lldb 14 unwinds a frame by the FDE at the
 * start of the function containing its pc, or by analysing its instructions
 * from that start as if it were an entry: a region with several functions
 * under one symbol is unwound by the first one's rules everywhere, and a
 * symbol starting where the frame is already set up (an FDE for the body of
 * the previous function) would be analysed from a wrong state. gdb shows
 * every part under the region's name.
 */
static size_t part_end(const jf__live *r, size_t part_start)
{
    return jf__cfi_next_entry(jf__live_about(r)->cfi, part_start, r->size);
}

/* A compile unit covering exactly region r, with a subprogram per part (see
 * put_symtab): lldb wants a unit before it uses a line table, gdb finds the
 * unit by address. */
static void put_compile_unit(jf__writer *w, const jf__live *r, uint64_t stmt_list)
{
    size_t unit_start = w->pos;
    jf__put_u32(w, 0); /* unit_length, patched below */
    jf__put_u16(w, 4);
    jf__put_u32(w, 0); /* debug_abbrev_offset */
    jf__put_u8(w, 8);  /* address_size */
    jf__put_uleb128(w, ABBREV_CU);
    jf__put_cstr(w, "jitframes");
    jf__put_u16(w, DW_LANG_C99);
    jf__put_cstr(w, unit_name(r));
    jf__put_u64(w, r->start);
    jf__put_u64(w, r->size);
    jf__put_u32(w, (uint32_t)stmt_list);
    for (size_t at = 0, end; at < r->size; at = end) {
        end = part_end(r, at);
        jf__put_uleb128(w, ABBREV_SUBPROGRAM);
        jf__put_cstr(w, r->name);
        jf__put_u64(w, r->start + at);
        jf__put_u64(w, end - at);
    }
    jf__put_u8(w, 0); /* end of the unit's children */
    jf__patch_u32(w, unit_start, (uint32_t)(w->pos - unit_start - 4));
}

/* ---- sections ---------------------------------------------------------- */

static void begin_section(jf__writer *w, builder *b, enum section_kind k, size_t align)
{
    jf__put_align(w, align);
    b->sec[k].offset = w->pos;
    b->sec[k].align = align;
}

static void end_section(jf__writer *w, builder *b, enum section_kind k)
{
    b->sec[k].size = w->pos - b->sec[k].offset;
}

static void put_symtab(jf__writer *w, builder *b)
{
    begin_section(w, b, SEC_SYMTAB, 8);
    jf__put_zeros(w, SYM_SIZE);
    uint32_t name = 1;
    size_t span = 0;
    for (size_t i = 0; i < b->n; i++) {
        const jf__live *r = b->regions[i];
        while (span + 1 < b->n_spans && b->spans[span].hi <= r->start)
            span++;
        for (size_t at = 0, end; at < r->size; at = end) {
            end = part_end(r, at);
            jf__put_u32(w, name);
            jf__put_u8(w, (STB_GLOBAL << 4) | STT_FUNC);
            jf__put_u8(w, 0); /* STV_DEFAULT */
            jf__put_u16(w, (uint16_t)(1 + span));
            jf__put_u64(w, r->start + at - b->spans[span].lo); /* ET_REL: relative to the section */
            jf__put_u64(w, end - at);
        }
        name += (uint32_t)strlen(r->name) + 1;
    }
    end_section(w, b, SEC_SYMTAB);
    b->sec[SEC_SYMTAB].entsize = SYM_SIZE;
    b->sec[SEC_SYMTAB].info = 1; /* every symbol after the null one is global */
}

static void put_strtab(jf__writer *w, builder *b)
{
    begin_section(w, b, SEC_STRTAB, 1);
    jf__put_u8(w, 0);
    for (size_t i = 0; i < b->n; i++)
        jf__put_cstr(w, b->regions[i]->name);
    end_section(w, b, SEC_STRTAB);
}

static void put_debug_sections(jf__writer *w, builder *b)
{
    begin_section(w, b, SEC_ABBREV, 1);
    put_abbrevs(w);
    end_section(w, b, SEC_ABBREV);

    begin_section(w, b, SEC_LINE, 1);
    for (size_t i = 0; i < b->n; i++) {
        if (!region_has_lines(b->regions[i]))
            continue;
        b->line_offsets[i] = w->pos - b->sec[SEC_LINE].offset;
        put_line_program(w, b->regions[i], b->files);
    }
    end_section(w, b, SEC_LINE);

    begin_section(w, b, SEC_INFO, 1);
    for (size_t i = 0; i < b->n; i++)
        if (region_has_lines(b->regions[i]))
            put_compile_unit(w, b->regions[i], b->line_offsets[i]);
    end_section(w, b, SEC_INFO);
}

static void put_shstrtab(jf__writer *w, builder *b)
{
    begin_section(w, b, SEC_SHSTRTAB, 1);
    size_t start = w->pos;
    jf__put_u8(w, 0);
    b->text_name = (uint32_t)(w->pos - start);
    jf__put_cstr(w, ".text");
    for (size_t i = 1; i < b->n_spans; i++) {
        char name[32];
        snprintf(name, sizeof name, ".text.%zu", i);
        jf__put_cstr(w, name);
    }
    for (int k = 0; k < SEC_KINDS; k++) {
        b->sec[k].name = (uint32_t)(w->pos - start);
        jf__put_cstr(w, section_names[k]);
    }
    end_section(w, b, SEC_SHSTRTAB);
}

/* Every region's CFI, one after another, each emitted in place at its final
 * address. Each emission ends with a zero terminator (and .eh_frame_hdr)
 * that the next region's records overwrite; the last terminator ends the
 * section. Measuring reserves the worst case. */
static int put_eh_frame(jf__writer *w, builder *b)
{
    begin_section(w, b, SEC_EH, 8);
    int emitted = 0;
    for (size_t i = 0; i < b->n; i++) {
        const jf__live *r = b->regions[i];
        const struct jf_cfi *cfi = jf__live_about(r)->cfi;
        if (!cfi)
            continue;
        if (!w->buf) {
            jf__writer_reserve(w, jf__cfi_max_image_size(cfi));
            continue;
        }
        if (w->pos > w->cap)
            return jf__internal("symfile larger than measured");
        uint8_t *at = w->buf + w->pos;
        jf__eh_image img;
        int rc = jf__cfi_emit(cfi, JF_EH_LAYOUT_ABSOLUTE, r->start, r->size, (uint64_t)(uintptr_t)at, at,
                              w->cap - w->pos, &img);
        if (rc)
            return rc;
        if (img.eh_frame_size < 4)
            return jf__internal("%s: CFI image without a terminator", r->name);
        jf__writer_reserve(w, img.eh_frame_size - 4); /* up to its terminator */
        emitted = 1;
    }
    if (emitted && w->buf)
        jf__writer_reserve(w, 4); /* the last terminator */
    end_section(w, b, SEC_EH);
    b->sec[SEC_EH].addr = w->buf ? (uint64_t)(uintptr_t)(w->buf + b->sec[SEC_EH].offset) : 0;
    return 0;
}

/* ---- headers ----------------------------------------------------------- */

static size_t program_header_count(const builder *b)
{
    return b->n_spans + (b->index[SEC_EH] ? 1 : 0);
}

static void put_elf_header(jf__writer *w, const builder *b, uint64_t shoff)
{
    const uint8_t ident[16] = {
        0x7f, 'E', 'L', 'F', ELFCLASS64, w->big_endian ? ELFDATA2MSB : ELFDATA2LSB, EV_CURRENT};
    jf__put_bytes(w, ident, sizeof ident);
    jf__put_u16(w, ET_REL);
    jf__put_u16(w, HOST_MACHINE);
    jf__put_u32(w, EV_CURRENT);
    jf__put_u64(w, 0);         /* e_entry */
    jf__put_u64(w, EHDR_SIZE); /* e_phoff */
    jf__put_u64(w, shoff);
    jf__put_u32(w, HOST_FLAGS);
    jf__put_u16(w, EHDR_SIZE);
    jf__put_u16(w, PHDR_SIZE);
    jf__put_u16(w, (uint16_t)program_header_count(b));
    jf__put_u16(w, SHDR_SIZE);
    jf__put_u16(w, b->shnum);
    jf__put_u16(w, b->index[SEC_SHSTRTAB]);
}

static void put_program_header(jf__writer *w, uint32_t flags, uint64_t offset, uint64_t addr, uint64_t filesz,
                               uint64_t memsz)
{
    jf__put_u32(w, PT_LOAD);
    jf__put_u32(w, flags);
    jf__put_u64(w, offset);
    jf__put_u64(w, addr);
    jf__put_u64(w, addr);
    jf__put_u64(w, filesz);
    jf__put_u64(w, memsz);
    jf__put_u64(w, 1);
}

/* One segment per .text span (nothing in the file), and one for .eh_frame,
 * which is loaded where it already is. */
static void put_program_headers(jf__writer *w, const builder *b)
{
    for (size_t i = 0; i < b->n_spans; i++)
        put_program_header(w, PF_R | PF_X, 0, b->spans[i].lo, 0, b->spans[i].hi - b->spans[i].lo);
    if (b->index[SEC_EH]) {
        const section *eh = &b->sec[SEC_EH];
        put_program_header(w, PF_R, eh->offset, eh->addr, eh->size, eh->size);
    }
}

static void put_section_header(jf__writer *w, const section *s)
{
    jf__put_u32(w, s->name);
    jf__put_u32(w, s->type);
    jf__put_u64(w, s->flags);
    jf__put_u64(w, s->addr);
    jf__put_u64(w, s->offset);
    jf__put_u64(w, s->size);
    jf__put_u32(w, s->link);
    jf__put_u32(w, s->info);
    jf__put_u64(w, s->align);
    jf__put_u64(w, s->entsize);
}

/* The length of span i's section name with its NUL (".text", ".text.<i>"). */
static uint32_t text_name_size(size_t i)
{
    char name[32];
    return (uint32_t)snprintf(name, sizeof name, i ? ".text.%zu" : ".text", i) + 1;
}

/* Each span's section has a name of its own: lldb 14 looks a symbol's
 * section up by name, so spans sharing ".text" put every symbol at the
 * first one's address (unnamed or wrongly named frames). */
static void put_section_headers(jf__writer *w, builder *b)
{
    section s = {0};
    put_section_header(w, &s);
    uint32_t name = b->text_name;
    for (size_t i = 0; i < b->n_spans; i++) {
        section text = {.name = name,
                        .type = SHT_NOBITS,
                        .flags = SHF_ALLOC | SHF_EXECINSTR,
                        .addr = b->spans[i].lo,
                        .offset = EHDR_SIZE + PHDR_SIZE * program_header_count(b),
                        .size = b->spans[i].hi - b->spans[i].lo,
                        .align = 1};
        put_section_header(w, &text);
        name += text_name_size(i);
    }
    b->sec[SEC_EH].type = SHT_PROGBITS;
    b->sec[SEC_EH].flags = SHF_ALLOC;
    b->sec[SEC_ABBREV].type = b->sec[SEC_INFO].type = b->sec[SEC_LINE].type = SHT_PROGBITS;
    b->sec[SEC_SYMTAB].type = SHT_SYMTAB;
    b->sec[SEC_SYMTAB].link = b->index[SEC_STRTAB];
    b->sec[SEC_STRTAB].type = b->sec[SEC_SHSTRTAB].type = SHT_STRTAB;
    for (int k = 0; k < SEC_KINDS; k++)
        if (b->index[k])
            put_section_header(w, &b->sec[k]);
}

/* One pass: measures when w has no buffer, writes otherwise. */
static int put_image(jf__writer *w, builder *b)
{
    /* Both header tables are written last, when every offset is known. */
    size_t headers = EHDR_SIZE + PHDR_SIZE * program_header_count(b);
    jf__put_zeros(w, headers);
    put_symtab(w, b);
    put_strtab(w, b);
    if (b->index[SEC_INFO])
        put_debug_sections(w, b);
    put_shstrtab(w, b);
    if (b->index[SEC_EH]) {
        int rc = put_eh_frame(w, b);
        if (rc)
            return rc;
    }
    jf__put_align(w, 8);
    uint64_t shoff = w->pos;
    put_section_headers(w, b);
    if (w->buf) {
        jf__writer header;
        jf__writer_init(&header, w->buf, headers);
        put_elf_header(&header, b, shoff);
        put_program_headers(&header, b);
    }
    return 0;
}

/* Decide which sections exist and number them. */
static void plan_sections(builder *b)
{
    int has_eh = 0, has_lines = 0;
    for (size_t i = 0; i < b->n; i++) {
        has_eh |= jf__live_about(b->regions[i])->cfi != NULL;
        has_lines |= region_has_lines(b->regions[i]);
    }
    uint16_t next = (uint16_t)(1 + b->n_spans);
    for (int k = 0; k < SEC_KINDS; k++) {
        int present = k == SEC_EH                                           ? has_eh
                      : (k == SEC_ABBREV || k == SEC_INFO || k == SEC_LINE) ? has_lines
                                                                            : 1;
        b->index[k] = present ? next++ : 0;
    }
    b->shnum = next;
}

/* Scratch space for the DWARF parts: per-region line program offsets and
 * room for the largest file table. */
static int alloc_line_scratch(builder *b)
{
    size_t max_files = 0;
    for (size_t i = 0; i < b->n; i++)
        if (jf__live_about(b->regions[i])->n_lines + 1 > max_files)
            max_files = jf__live_about(b->regions[i])->n_lines + 1;
    b->line_offsets = calloc(b->n, sizeof *b->line_offsets);
    b->files = calloc(max_files, sizeof *b->files);
    return b->line_offsets && b->files ? 0 : JF_ENOMEM;
}

int jf__elf_image_build(jf__live *const *regions, size_t n, const jf__elf_span *spans, size_t n_spans,
                        jf__elf_image *out)
{
    out->bytes = NULL;
    out->size = 0;
    if (n_spans == 0 || n_spans > JF_ELF_MAX_SPANS)
        return jf__fail(JF_ERANGE, "a symfile needs 1 to %u code ranges, not %zu", JF_ELF_MAX_SPANS, n_spans);
    builder b = {.regions = regions, .n = n, .spans = spans, .n_spans = n_spans};
    plan_sections(&b);
    int rc = 0;
    if (b.index[SEC_INFO] && alloc_line_scratch(&b) != 0)
        rc = jf__fail(JF_ENOMEM, "out of memory for the line tables of a symfile");
    jf__writer w;
    jf__writer_init(&w, NULL, 0);
    if (rc == 0)
        rc = put_image(&w, &b);
    /* Any memory will do (.eh_frame holds absolute addresses, so it may live
     * anywhere relative to the code): malloc's is 16-aligned, and cheaper
     * than a mapping of its own per symfile, which costs two system calls
     * and a TLB shootdown when it goes. */
    size_t cap = w.pos;
    uint8_t *bytes = NULL;
    if (rc == 0 && !(bytes = malloc(cap)))
        rc = jf__fail(JF_ENOMEM, "out of memory for a %zu-byte symfile", cap);
    if (rc == 0) {
        jf__writer_init(&w, bytes, cap);
        rc = put_image(&w, &b);
        if (rc == 0 && !jf__writer_ok(&w))
            rc = jf__internal("symfile larger than measured (%zu > %zu bytes)", w.pos, cap);
    }
    free(b.line_offsets);
    free(b.files);
    if (rc) {
        free(bytes);
        return rc;
    }
    out->bytes = bytes;
    out->size = w.pos;
    return 0;
}

void jf__elf_image_free(jf__elf_image *image)
{
    free(image->bytes);
    image->bytes = NULL;
    image->size = 0;
}
