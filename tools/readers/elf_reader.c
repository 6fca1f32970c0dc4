/*
 * Symfile walker and validator. What gdb and lldb need from a JIT symfile
 * (docs/formats.md): a well-formed ELF64 object, FUNC symbols inside executable
 * sections with non-zero sizes, no SHF_ALLOC section at address 0 (gdb
 * registration becomes ~15x slower), and a .eh_frame whose FDEs, read at the
 * section's sh_addr, describe code that a FUNC symbol names.
 */
#include "elf_reader.h"

#include <stdlib.h>
#include <string.h>

enum {
    EHDR_SIZE = 64,
    SHDR_SIZE = 64,
    PHDR_SIZE = 56,
    SYM_SIZE = 24,
    SHT_SYMTAB = 2,
    SHT_STRTAB = 3,
    SHT_NOBITS = 8,
    SHF_ALLOC = 0x2,
    SHF_EXECINSTR = 0x4,
    STT_FUNC = 2,
    SHN_LORESERVE = 0xff00,
    ET_REL = 1,
};

typedef struct range {
    uint64_t lo, hi;
    const char *name;
} range;

typedef struct walker {
    const uint8_t *buf;
    size_t len;
    elf_info info;
    elf_section *sections;
    range *funcs;
    size_t n_funcs;
    const elf_visitor *v;
    void *ctx;
    jft_rules rules;
    elf_summary *sum;
    jft_error *err;
} walker;

static int read_ehdr(walker *w, uint64_t *shoff, uint64_t *phoff)
{
    if (w->len < EHDR_SIZE)
        return jft_fail(w->err, 0, "file too short for an ELF64 header (%zu bytes)", w->len);
    if (memcmp(w->buf, "\177ELF", 4) != 0)
        return jft_fail(w->err, 0, "not an ELF file");
    if (w->buf[4] != 2)
        return jft_fail(w->err, 4, "ELF class %u: only 64-bit symfiles are supported", w->buf[4]);
    if (w->buf[5] != 1 && w->buf[5] != 2)
        return jft_fail(w->err, 5, "bad ELF data encoding %u", w->buf[5]);
    jft_reader r;
    jft_reader_init(&r, w->buf, w->len, w->buf[5] == 2);
    r.pos = 16;
    elf_info *i = &w->info;
    i->big_endian = r.big_endian;
    i->type = jft_u16(&r);
    i->machine = jft_u16(&r);
    uint32_t version = jft_u32(&r);
    jft_u64(&r); /* entry */
    *phoff = jft_u64(&r);
    *shoff = jft_u64(&r);
    jft_u32(&r); /* flags */
    uint16_t ehsize = jft_u16(&r), phentsize = jft_u16(&r);
    i->phnum = jft_u16(&r);
    uint16_t shentsize = jft_u16(&r);
    i->shnum = jft_u16(&r);
    i->shstrndx = jft_u16(&r);
    if (w->v && w->v->header)
        w->v->header(w->ctx, i);
    if (ehsize != EHDR_SIZE || shentsize != SHDR_SIZE || (i->phnum && phentsize != PHDR_SIZE))
        return jft_fail(w->err, 52, "unexpected ELF header, section or program header entry size");
    if (i->shnum == 0 || !jft_fits(*shoff, (uint64_t)i->shnum * SHDR_SIZE, w->len))
        return jft_fail(w->err, 40, "section headers (%u at 0x%llx) do not fit in the file", i->shnum,
                        (unsigned long long)*shoff);
    if (!jft_fits(*phoff, (uint64_t)i->phnum * PHDR_SIZE, w->len))
        return jft_fail(w->err, 32, "program headers do not fit in the file");
    if (i->shstrndx >= i->shnum)
        return jft_fail(w->err, 62, "e_shstrndx %u is not a section", i->shstrndx);
    if (w->buf[6] != 1 || version != 1)
        return jft_violation(&w->rules, 6, "ELF version is not 1");
    if (i->type < 1 || i->type > 3)
        return jft_violation(&w->rules, 16, "ELF type %u is not ET_REL, ET_EXEC or ET_DYN", i->type);
    return 0;
}

/* Only these sections' offset and size were checked against the file. */
static int has_file_data(const elf_section *s)
{
    return s->type != 0 && s->type != SHT_NOBITS;
}

/* A NUL-terminated string at `offset` inside section `strtab`, or NULL. */
static const char *string_at(const walker *w, const elf_section *strtab, uint64_t offset)
{
    if (strtab->type != SHT_STRTAB || offset >= strtab->size)
        return NULL;
    const char *s = (const char *)w->buf + strtab->offset + offset;
    return memchr(s, 0, (size_t)(strtab->size - offset)) ? s : NULL;
}

static int read_sections(walker *w, uint64_t shoff)
{
    w->sections = calloc(w->info.shnum, sizeof *w->sections);
    if (!w->sections)
        return jft_fail(w->err, 0, "out of memory");
    for (size_t k = 0; k < w->info.shnum; k++) {
        jft_reader r;
        jft_reader_init(&r, w->buf, w->len, w->info.big_endian);
        r.pos = (size_t)(shoff + k * SHDR_SIZE);
        elf_section *s = &w->sections[k];
        s->name = (const char *)(uintptr_t)jft_u32(&r); /* resolved below */
        s->type = jft_u32(&r);
        s->flags = jft_u64(&r);
        s->addr = jft_u64(&r);
        s->offset = jft_u64(&r);
        s->size = jft_u64(&r);
        s->link = jft_u32(&r);
        s->info = jft_u32(&r);
        jft_u64(&r); /* addralign */
        s->entsize = jft_u64(&r);
        if (has_file_data(s) && !jft_fits(s->offset, s->size, w->len))
            return jft_fail(w->err, shoff + k * SHDR_SIZE, "section %zu runs past the end of the file", k);
    }
    const elf_section *shstrtab = &w->sections[w->info.shstrndx];
    if (shstrtab->type != SHT_STRTAB)
        return jft_fail(w->err, 62, "e_shstrndx does not name a string table");
    for (size_t k = 0; k < w->info.shnum; k++) {
        elf_section *s = &w->sections[k];
        const char *name = string_at(w, shstrtab, (uint64_t)(uintptr_t)s->name);
        s->name = name ? name : "?";
        if (!name)
            return jft_fail(w->err, shoff + k * SHDR_SIZE, "section %zu has no valid name", k);
    }
    return 0;
}

static int check_sections(walker *w, uint64_t shoff)
{
    for (size_t k = 1; k < w->info.shnum; k++) {
        const elf_section *s = &w->sections[k];
        if (w->v && w->v->section)
            w->v->section(w->ctx, k, s);
        w->sum->sections++;
        if ((s->flags & SHF_ALLOC) && s->addr == 0)
            if (jft_violation(&w->rules, shoff + k * SHDR_SIZE + 16,
                              "SHF_ALLOC section %s at address 0 (gdb registration gets much slower)",
                              s->name))
                return -1;
    }
    return 0;
}

/* ---- symbols ------------------------------------------------------------- */

static int check_function(walker *w, const elf_symbol *sym, uint64_t where)
{
    if (sym->shndx == 0 || sym->shndx >= w->info.shnum)
        return jft_violation(&w->rules, where, "FUNC symbol %s is in section %u, which is not a section",
                             sym->name, sym->shndx);
    const elf_section *s = &w->sections[sym->shndx];
    if (!(s->flags & SHF_EXECINSTR))
        return jft_violation(&w->rules, where, "FUNC symbol %s is in non-executable section %s", sym->name,
                             s->name);
    if (sym->size == 0)
        return jft_violation(&w->rules, where, "FUNC symbol %s has size 0", sym->name);
    if (sym->addr < s->addr || sym->addr + sym->size < sym->addr || sym->addr + sym->size > s->addr + s->size)
        return jft_violation(&w->rules, where,
                             "FUNC symbol %s (%llx-%llx) lies outside its section %s (%llx-%llx)", sym->name,
                             (unsigned long long)sym->addr, (unsigned long long)(sym->addr + sym->size),
                             s->name, (unsigned long long)s->addr, (unsigned long long)(s->addr + s->size));
    char why[128];
    size_t bad;
    if (jft_check_name((const uint8_t *)sym->name, strlen(sym->name), &bad, why, sizeof why))
        return jft_violation(&w->rules, where, "FUNC symbol name: %s", why);
    return 0;
}

static int add_function(walker *w, const elf_symbol *sym)
{
    range *bigger = realloc(w->funcs, (w->n_funcs + 1) * sizeof *bigger);
    if (!bigger)
        return jft_fail(w->err, 0, "out of memory");
    w->funcs = bigger;
    w->funcs[w->n_funcs++] = (range){sym->addr, sym->addr + sym->size, sym->name};
    w->sum->functions++;
    return 0;
}

static int read_symtab(walker *w, const elf_section *symtab)
{
    if (symtab->entsize != SYM_SIZE || symtab->link >= w->info.shnum)
        return jft_fail(w->err, symtab->offset, "symbol table %s has a bad entry size or string table link",
                        symtab->name);
    const elf_section *strtab = &w->sections[symtab->link];
    for (uint64_t k = 1; k < symtab->size / SYM_SIZE; k++) {
        jft_reader r;
        jft_reader_init(&r, w->buf + symtab->offset, (size_t)symtab->size, w->info.big_endian);
        r.pos = (size_t)(k * SYM_SIZE);
        uint64_t where = symtab->offset + r.pos;
        elf_symbol sym = {0};
        uint32_t name = jft_u32(&r);
        uint8_t info = jft_u8(&r);
        jft_u8(&r);
        sym.shndx = jft_u16(&r);
        sym.value = jft_u64(&r);
        sym.size = jft_u64(&r);
        sym.type = info & 0xf;
        sym.bind = info >> 4;
        sym.name = string_at(w, strtab, name);
        if (!sym.name)
            return jft_fail(w->err, where, "symbol %llu has no valid name", (unsigned long long)k);
        sym.addr = sym.value;
        if (w->info.type == ET_REL && sym.shndx > 0 && sym.shndx < w->info.shnum)
            sym.addr += w->sections[sym.shndx].addr;
        if (w->v && w->v->symbol)
            w->v->symbol(w->ctx, (size_t)k, &sym);
        if (sym.type != STT_FUNC || sym.shndx >= SHN_LORESERVE)
            continue;
        uint64_t before = w->rules.count;
        if (check_function(w, &sym, where))
            return -1;
        if (w->rules.count == before && add_function(w, &sym))
            return -1;
    }
    return 0;
}

static int by_lo(const void *a, const void *b)
{
    const range *x = a, *y = b;
    return (x->lo > y->lo) - (x->lo < y->lo);
}

static int check_functions_disjoint(walker *w)
{
    if (w->n_funcs > 1)
        qsort(w->funcs, w->n_funcs, sizeof *w->funcs, by_lo);
    for (size_t i = 1; i < w->n_funcs; i++)
        if (w->funcs[i].lo < w->funcs[i - 1].hi)
            return jft_violation(&w->rules, 0, "FUNC symbols %s (%llx-%llx) and %s (%llx-%llx) overlap",
                                 w->funcs[i - 1].name, (unsigned long long)w->funcs[i - 1].lo,
                                 (unsigned long long)w->funcs[i - 1].hi, w->funcs[i].name,
                                 (unsigned long long)w->funcs[i].lo, (unsigned long long)w->funcs[i].hi);
    return 0;
}

/* ---- .eh_frame ------------------------------------------------------------ */

static const range *function_containing(const walker *w, uint64_t lo, uint64_t hi)
{
    size_t a = 0, b = w->n_funcs;
    while (a < b) { /* last function starting at or below lo */
        size_t mid = a + (b - a) / 2;
        if (w->funcs[mid].lo <= lo)
            a = mid + 1;
        else
            b = mid;
    }
    if (a == 0)
        return NULL;
    const range *f = &w->funcs[a - 1];
    return hi <= f->hi ? f : NULL;
}

static const elf_section *section_named(const walker *w, const char *name)
{
    for (size_t k = 1; k < w->info.shnum; k++)
        if (strcmp(w->sections[k].name, name) == 0)
            return &w->sections[k];
    return NULL;
}

static int check_eh_frame(walker *w, const elf_section *eh, ehf_table *t)
{
    ehf_layout layout = {w->info.big_endian, 8, (int64_t)eh->addr, eh->offset};
    const uint8_t *data = w->buf + eh->offset;
    jft_error local = {0};
    if (ehf_decode(data, (size_t)eh->size, &layout, t, &local))
        return jft_violation(&w->rules, local.where, ".eh_frame: %s", local.msg);
    w->sum->fdes = t->n_fdes;
    if (w->v && w->v->eh_frame)
        w->v->eh_frame(w->ctx, data, (size_t)eh->size, &layout, t, w->info.machine);
    for (size_t i = 0; i < t->n_fdes; i++) {
        const ehf_fde *f = &t->fdes[i];
        uint64_t lo = (uint64_t)f->pc_begin, hi = lo + f->pc_range;
        if (!function_containing(w, lo, hi))
            return jft_violation(
                &w->rules, eh->offset + f->pc_begin_field,
                "FDE at .eh_frame offset %llu covers %llx-%llx, which no FUNC symbol contains",
                (unsigned long long)f->offset, (unsigned long long)lo, (unsigned long long)hi);
    }
    const elf_section *hdr = section_named(w, ".eh_frame_hdr");
    if (hdr && has_file_data(hdr) &&
        ehf_check_hdr(w->buf + hdr->offset, (size_t)hdr->size, (int64_t)hdr->addr, &layout, t, hdr->offset,
                      &local))
        return jft_violation(&w->rules, local.where, "%s", local.msg);
    return 0;
}

static int walk(walker *w)
{
    uint64_t shoff = 0, phoff = 0;
    if (read_ehdr(w, &shoff, &phoff) || read_sections(w, shoff) || check_sections(w, shoff))
        return -1;
    /* One symbol table, as ELF allows: many headers naming the same bytes
     * would multiply what the walk keeps per symbol. */
    const elf_section *symtab = NULL;
    for (size_t k = 1; k < w->info.shnum; k++) {
        if (w->sections[k].type != SHT_SYMTAB)
            continue;
        if (symtab)
            return jft_violation(&w->rules, shoff + k * SHDR_SIZE,
                                 "section %zu is a second symbol table "
                                 "(ELF allows one)",
                                 k);
        symtab = &w->sections[k];
        if (read_symtab(w, symtab))
            return -1;
    }
    if (check_functions_disjoint(w))
        return -1;
    const elf_section *eh = section_named(w, ".eh_frame");
    if (!eh || !has_file_data(eh))
        return 0;
    ehf_table t = {0};
    int rc = check_eh_frame(w, eh, &t);
    ehf_free(&t);
    return rc;
}

int elf_walk(const uint8_t *buf, size_t len, const elf_visitor *v, void *ctx, int keep_going,
             elf_summary *summary, jft_error *err)
{
    elf_summary local_summary;
    walker w = {0};
    w.buf = buf;
    w.len = len;
    w.v = v;
    w.ctx = ctx;
    jft_rules_init(&w.rules, err, keep_going);
    w.sum = summary ? summary : &local_summary;
    w.err = w.rules.err;
    memset(w.sum, 0, sizeof *w.sum);
    int rc = walk(&w);
    free(w.sections);
    free(w.funcs);
    return rc || w.err->set ? -1 : 0;
}

int elf_check(const uint8_t *buf, size_t len, elf_summary *summary, jft_error *err)
{
    return elf_walk(buf, len, NULL, NULL, 0, summary, err);
}
