/*
 * cfi-extract: build-time tool turning an assembled trampoline template
 * (src/arch/<arch>.S as an ELF64 relocatable object of either byte order,
 * for any supported architecture: it runs on the build host, so cross
 * builds work, a big-endian s390x object read on x86_64 included)
 * into a C header for src/trampoline.c. It exists so that no unwind byte is
 * ever written by hand: the CFI comes from the assembler's .eh_frame for the
 * very instructions that get copied.
 *
 * Usage: cfi-extract [--name NAME] TEMPLATE.o OUT.h
 *
 * What it checks, refusing the object otherwise:
 * - the symbol jitframes_trampoline_template is a sized function;
 * - .eh_frame holds exactly one FDE, covering exactly that symbol, with a CIE
 *   whose augmentation it understands (z, R) and CFA programs made only of
 *   DWARF call-frame instructions it knows, advancing no further than the end;
 * - the only .eh_frame relocation left is the FDE's pc_begin. RISC-V gas
 *   (binutils 2.40) writes the FDE's range and some advance deltas as pairs of
 *   label-difference relocations (ADD/SUB, SET/SUB) even under
 *   `.option norelax`; a pair whose two labels both lie inside the template is
 *   resolved here exactly (the template's offsets are final: nothing relaxes
 *   it, and the runtime copies it verbatim). Any other relocation is refused.
 * - the template's code has exactly one relocated reference, to the data slot
 *   jitframes_trampoline_slot, of the architecture's known kind (see
 *   src/arch/template.h); a linker-relaxation marker is refused.
 */
#include "dwarf_cfa.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEMPLATE_SYMBOL "jitframes_trampoline_template"
#define SLOT_SYMBOL "jitframes_trampoline_slot"

enum {
    SHT_SYMTAB_ = 2,
    SHT_RELA_ = 4,
    SHT_NOBITS_ = 8,
    SHT_REL_ = 9,
    STT_FUNC_ = 2,
    EM_X86_64_ = 62,
    EM_AARCH64_ = 183,
    EM_PPC64_ = 21,
    EM_S390_ = 22,
    EM_RISCV_ = 243,
};

/* Relocation types used below, by architecture. */
enum {
    R_X86_64_PC32_ = 2,
    R_AARCH64_PREL32_ = 261,
    R_AARCH64_LD_PREL_LO19_ = 273,
    R_RISCV_PCREL_HI20_ = 23,
    R_RISCV_PCREL_LO12_I_ = 24,
    R_RISCV_ADD8_ = 33,
    R_RISCV_ADD16_ = 34,
    R_RISCV_ADD32_ = 35,
    R_RISCV_ADD64_ = 36,
    R_RISCV_SUB8_ = 37,
    R_RISCV_SUB16_ = 38,
    R_RISCV_SUB32_ = 39,
    R_RISCV_SUB64_ = 40,
    R_RISCV_SUB6_ = 52,
    R_RISCV_SET6_ = 53,
    R_RISCV_SET8_ = 54,
    R_RISCV_SET16_ = 55,
    R_RISCV_SET32_ = 56,
    R_RISCV_32_PCREL_ = 57,
    R_PPC64_REL32_ = 26,
    R_PPC64_REL16_LO_ = 250,
    R_PPC64_REL16_HA_ = 252,
    R_390_PC32_ = 5,
    R_390_PC32DBL_ = 19,
};

typedef struct machine {
    uint16_t em;
    const char *arch;
    uint32_t pc_begin_reloc; /* the 32-bit pc-relative type gas uses for pc_begin */
    const char *slot_kind;   /* jf__slot_kind enumerator name */
    uint32_t slot_reloc;     /* the relocation against the slot (the high half of a pair) */
    uint32_t slot_reloc_lo;  /* the low half's relocation, 0 if the reference is one */
    uint8_t big_endian;      /* ELFDATA2MSB */
} machine;

static const machine machines[] = {
    {EM_X86_64_, "x86_64", R_X86_64_PC32_, "JF_SLOT_X86_64_PC32", R_X86_64_PC32_, 0, 0},
    {EM_AARCH64_, "aarch64", R_AARCH64_PREL32_, "JF_SLOT_AARCH64_LD_PREL_LO19", R_AARCH64_LD_PREL_LO19_, 0,
     0},
    {EM_RISCV_, "riscv64", R_RISCV_32_PCREL_, "JF_SLOT_RISCV_PCREL_HI20_LO12_I", R_RISCV_PCREL_HI20_,
     R_RISCV_PCREL_LO12_I_, 0},
    {EM_PPC64_, "ppc64le", R_PPC64_REL32_, "JF_SLOT_PPC64_REL16_HA_LO", R_PPC64_REL16_HA_, R_PPC64_REL16_LO_,
     0},
    {EM_S390_, "s390x", R_390_PC32_, "JF_SLOT_S390_PC32DBL", R_390_PC32DBL_, 0, 1},
};

static const char *input_path = "?";

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "cfi-extract: %s: ", input_path);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

/* ---- bounds-checked reading in the object's byte order ------------------ */

typedef struct bytes {
    const uint8_t *p;
    size_t size;
    int big_endian; /* the file's EI_DATA, inherited by every range of it */
} bytes;

static uint64_t read_uint(bytes b, uint64_t at, unsigned n, const char *what)
{
    if (at > b.size || n > b.size - at)
        die("truncated %s (offset %llu)", what, (unsigned long long)at);
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)b.p[at + (b.big_endian ? n - 1 - i : i)] << (8 * i);
    return v;
}

static bytes sub_bytes(bytes b, uint64_t at, uint64_t n, const char *what)
{
    if (at > b.size || n > b.size - at)
        die("%s lies outside the file", what);
    return (bytes){b.p + at, (size_t)n, b.big_endian};
}

/* A reading position inside a byte range (DWARF entries). */
typedef struct cursor {
    bytes b;
    size_t pos;
} cursor;

static uint64_t cur_uint(cursor *c, unsigned n, const char *what)
{
    uint64_t v = read_uint(c->b, c->pos, n, what);
    c->pos += n;
    return v;
}

static uint64_t cur_uleb(cursor *c, const char *what)
{
    uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
        uint8_t byte = (uint8_t)cur_uint(c, 1, what);
        if (shift < 64)
            v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80))
            return v;
        if (shift > 63)
            die("%s: LEB128 too long", what);
    }
}

static int64_t cur_sleb(cursor *c, const char *what)
{
    uint64_t v = 0;
    unsigned shift = 0;
    uint8_t byte;
    do {
        byte = (uint8_t)cur_uint(c, 1, what);
        if (shift < 64)
            v |= (uint64_t)(byte & 0x7f) << shift;
        shift += 7;
        if (shift > 70)
            die("%s: LEB128 too long", what);
    } while (byte & 0x80);
    if (shift < 64 && (byte & 0x40))
        v |= ~(uint64_t)0 << shift;
    return (int64_t)v;
}

/* ---- ELF ---------------------------------------------------------------- */

typedef struct section {
    const char *name;
    uint32_t type;
    uint64_t offset, size, link, info, entsize;
} section;

typedef struct symbol {
    const char *name;
    uint8_t type;
    uint16_t shndx;
    uint64_t value, size;
} symbol;

typedef struct rela {
    uint64_t offset;
    uint32_t sym, type;
    int64_t addend;
} rela;

typedef struct object {
    bytes file;
    const machine *mach;
    section *sections;
    size_t n_sections;
    size_t symtab;
} object;

static const char *string_at(bytes table, uint64_t at, const char *what)
{
    if (at >= table.size || !memchr(table.p + at, 0, table.size - at))
        die("bad %s name offset %llu", what, (unsigned long long)at);
    return (const char *)table.p + at;
}

static bytes section_data(const object *o, size_t i)
{
    const section *s = &o->sections[i];
    if (s->type == SHT_NOBITS_)
        return (bytes){NULL, 0, o->file.big_endian};
    return sub_bytes(o->file, s->offset, s->size, s->name);
}

static void read_header(object *o)
{
    bytes f = o->file;
    if (f.size < 64 || memcmp(f.p, "\177ELF", 4) != 0)
        die("not an ELF file");
    if (f.p[4] != 2 || (f.p[5] != 1 && f.p[5] != 2))
        die("not ELF64");
    o->file.big_endian = f.p[5] == 2;
    f = o->file;
    if (read_uint(f, 16, 2, "e_type") != 1)
        die("not a relocatable object (ET_REL)");
    uint16_t em = (uint16_t)read_uint(f, 18, 2, "e_machine");
    for (size_t i = 0; i < sizeof machines / sizeof machines[0]; i++)
        if (machines[i].em == em)
            o->mach = &machines[i];
    if (!o->mach)
        die("unsupported e_machine %u (add the architecture to cfi-extract and src/arch)", em);
    if (o->mach->big_endian != f.big_endian)
        die("a %s-endian %s object: the library supports %s only %s-endian", f.big_endian ? "big" : "little",
            o->mach->arch, o->mach->arch, o->mach->big_endian ? "big" : "little");
    uint64_t shoff = read_uint(f, 40, 8, "e_shoff");
    uint64_t shentsize = read_uint(f, 58, 2, "e_shentsize");
    uint64_t shnum = read_uint(f, 60, 2, "e_shnum");
    uint64_t shstrndx = read_uint(f, 62, 2, "e_shstrndx");
    if (shentsize != 64 || shnum == 0 || shstrndx >= shnum)
        die("unexpected section header table");
    o->n_sections = (size_t)shnum;
    o->sections = calloc(o->n_sections, sizeof *o->sections);
    if (!o->sections)
        die("out of memory");
    bytes table = sub_bytes(f, shoff, shnum * 64, "section header table");
    for (size_t i = 0; i < o->n_sections; i++) {
        section *s = &o->sections[i];
        uint64_t at = i * 64;
        s->name = (const char *)(uintptr_t)read_uint(table, at, 4, "sh_name"); /* fixed below */
        s->type = (uint32_t)read_uint(table, at + 4, 4, "sh_type");
        s->offset = read_uint(table, at + 24, 8, "sh_offset");
        s->size = read_uint(table, at + 32, 8, "sh_size");
        s->link = read_uint(table, at + 40, 4, "sh_link");
        s->info = read_uint(table, at + 44, 4, "sh_info");
        s->entsize = read_uint(table, at + 56, 8, "sh_entsize");
    }
    bytes names = section_data(o, (size_t)shstrndx);
    for (size_t i = 0; i < o->n_sections; i++)
        o->sections[i].name = string_at(names, (uint64_t)(uintptr_t)o->sections[i].name, "section");
    o->symtab = 0;
    for (size_t i = 0; i < o->n_sections; i++)
        if (o->sections[i].type == SHT_SYMTAB_)
            o->symtab = i;
    if (!o->symtab || o->sections[o->symtab].link >= o->n_sections)
        die("no symbol table");
}

static size_t symbol_count(const object *o)
{
    return (size_t)(o->sections[o->symtab].size / 24);
}

static symbol read_symbol(const object *o, uint64_t i)
{
    bytes syms = section_data(o, o->symtab);
    bytes strs = section_data(o, (size_t)o->sections[o->symtab].link);
    uint64_t at = i * 24;
    symbol s;
    s.name = string_at(strs, read_uint(syms, at, 4, "st_name"), "symbol");
    s.type = (uint8_t)(read_uint(syms, at + 4, 1, "st_info") & 0xf);
    s.shndx = (uint16_t)read_uint(syms, at + 6, 2, "st_shndx");
    s.value = read_uint(syms, at + 8, 8, "st_value");
    s.size = read_uint(syms, at + 16, 8, "st_size");
    return s;
}

static symbol find_symbol(const object *o, const char *name)
{
    for (size_t i = 0; i < symbol_count(o); i++) {
        symbol s = read_symbol(o, i);
        if (strcmp(s.name, name) == 0)
            return s;
    }
    die("symbol %s not found", name);
    return (symbol){0};
}

static size_t find_section(const object *o, const char *name)
{
    for (size_t i = 1; i < o->n_sections; i++)
        if (strcmp(o->sections[i].name, name) == 0)
            return i;
    die("no %s section", name);
    return 0;
}

/* The RELA entries applying to section `target` (n_out = 0 if none). */
static rela *relocations_for(const object *o, size_t target, size_t *n_out)
{
    *n_out = 0;
    rela *out = NULL;
    for (size_t i = 0; i < o->n_sections; i++) {
        const section *s = &o->sections[i];
        if ((s->type != SHT_RELA_ && s->type != SHT_REL_) || s->info != target)
            continue;
        if (s->type == SHT_REL_)
            die("%s: REL relocations are not supported", s->name);
        if (out)
            die("several relocation sections for %s", o->sections[target].name);
        bytes data = section_data(o, i);
        size_t n = data.size / 24;
        out = calloc(n ? n : 1, sizeof *out);
        if (!out)
            die("out of memory");
        for (size_t k = 0; k < n; k++) {
            uint64_t info = read_uint(data, k * 24 + 8, 8, "r_info");
            out[k].offset = read_uint(data, k * 24, 8, "r_offset");
            out[k].sym = (uint32_t)(info >> 32);
            out[k].type = (uint32_t)info;
            out[k].addend = (int64_t)read_uint(data, k * 24 + 16, 8, "r_addend");
        }
        *n_out = n;
    }
    return out;
}

/* ---- the template and its slot reference -------------------------------- */

typedef struct template_info {
    symbol sym;
    size_t text; /* section index */
    bytes code;
    const char *slot_kind;
    uint64_t slot_at, slot_at_lo;
    int64_t slot_addend;
} template_info;

static int inside_template(const template_info *t, uint64_t offset)
{
    return offset >= t->sym.value && offset < t->sym.value + t->sym.size;
}

static void find_slot_reference(const object *o, template_info *t)
{
    size_t n;
    rela *r = relocations_for(o, t->text, &n);
    int found_hi = 0, found_lo = 0;
    int64_t lo_addend = 0;
    for (size_t i = 0; i < n; i++) {
        if (!inside_template(t, r[i].offset))
            continue;
        symbol s = read_symbol(o, r[i].sym);
        uint64_t at = r[i].offset - t->sym.value;
        uint16_t em = o->mach->em;
        int slot = strcmp(s.name, SLOT_SYMBOL) == 0;
        if (slot && !found_hi && r[i].type == o->mach->slot_reloc) {
            found_hi = 1;
            t->slot_at = at;
            t->slot_addend = r[i].addend;
        } else if (em == EM_RISCV_ && r[i].type == R_RISCV_PCREL_LO12_I_ && !found_lo && s.shndx == t->text &&
                   r[i].addend == 0) {
            found_lo = 1;
            t->slot_at_lo = at;
            t->slot_at = s.value - t->sym.value; /* checked against the HI20 below */
        } else if (em == EM_PPC64_ && slot && r[i].type == R_PPC64_REL16_LO_ && !found_lo) {
            /* Checked below: both halves must be of one slot - label. */
            found_lo = 1;
            t->slot_at_lo = at;
            lo_addend = r[i].addend;
        } else {
            die("unexpected relocation type %u against %s at template offset %llu "
                "(only one reference to " SLOT_SYMBOL " is allowed; no linker relaxation)",
                r[i].type, s.name[0] ? s.name : "(section)", (unsigned long long)at);
        }
    }
    if (!found_hi)
        die("the template does not reference " SLOT_SYMBOL " with a known relocation");
    if (o->mach->em == EM_RISCV_) {
        /* Re-read the HI20 offset: the LO12's label must name that AUIPC. */
        uint64_t label = t->slot_at;
        for (size_t i = 0; i < n; i++)
            if (r[i].type == R_RISCV_PCREL_HI20_ && inside_template(t, r[i].offset))
                t->slot_at = r[i].offset - t->sym.value;
        if (!found_lo || label != t->slot_at)
            die("the AUIPC's PCREL_LO12_I partner is missing or names another instruction");
    }
    if (o->mach->em == EM_PPC64_ &&
        (!found_lo || lo_addend - (int64_t)t->slot_at_lo != t->slot_addend - (int64_t)t->slot_at))
        die("the ADDIS's REL16_LO partner is missing or computes another distance");
    t->slot_kind = o->mach->slot_kind;
    free(r);
}

static template_info find_template(const object *o)
{
    template_info t = {0};
    t.sym = find_symbol(o, TEMPLATE_SYMBOL);
    if (t.sym.type != STT_FUNC_ || t.sym.size == 0)
        die(TEMPLATE_SYMBOL " must be a function with a .size");
    if (t.sym.shndx == 0 || t.sym.shndx >= o->n_sections)
        die(TEMPLATE_SYMBOL " is not defined in a section");
    t.text = t.sym.shndx;
    bytes text = section_data(o, t.text);
    t.code = sub_bytes(text, t.sym.value, t.sym.size, TEMPLATE_SYMBOL);
    find_slot_reference(o, &t);
    return t;
}

/* ---- .eh_frame relocations ---------------------------------------------- */

/* Offset of a symbol + addend inside the template section, or die. */
static uint64_t template_label(const object *o, const template_info *t, const rela *r)
{
    symbol s = read_symbol(o, r->sym);
    uint64_t v = s.value + (uint64_t)r->addend;
    if (s.shndx != t->text || v < t->sym.value || v > t->sym.value + t->sym.size)
        die(".eh_frame relocation at %llu refers outside the template", (unsigned long long)r->offset);
    return v;
}

/* Width in bytes of a RISC-V label-difference pair (first, second), 0 if
 * the pair is not one; *set is 1 when the first member sets the field. */
static unsigned riscv_pair_width(uint32_t first, uint32_t second, int *set)
{
    static const struct {
        uint32_t first, second;
        unsigned width;
        int set;
    } pairs[] = {
        {R_RISCV_SET6_, R_RISCV_SUB6_, 1, 1},   {R_RISCV_SET8_, R_RISCV_SUB8_, 1, 1},
        {R_RISCV_SET16_, R_RISCV_SUB16_, 2, 1}, {R_RISCV_SET32_, R_RISCV_SUB32_, 4, 1},
        {R_RISCV_ADD8_, R_RISCV_SUB8_, 1, 0},   {R_RISCV_ADD16_, R_RISCV_SUB16_, 2, 0},
        {R_RISCV_ADD32_, R_RISCV_SUB32_, 4, 0}, {R_RISCV_ADD64_, R_RISCV_SUB64_, 8, 0},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        if (pairs[i].first == first && pairs[i].second == second) {
            *set = pairs[i].set;
            return pairs[i].width;
        }
    }
    return 0;
}

/* Apply one resolved label difference to the .eh_frame copy. */
static void apply_difference(uint8_t *eh, size_t eh_size, const rela *first, unsigned width, int set,
                             int64_t diff)
{
    if (first->offset > eh_size || width > eh_size - first->offset)
        die(".eh_frame relocation at %llu is outside the section", (unsigned long long)first->offset);
    uint8_t *p = eh + first->offset;
    if (first->type == R_RISCV_SET6_) {
        if (diff < 0 || diff > 63)
            die("6-bit advance of %lld does not fit", (long long)diff);
        *p = (uint8_t)((*p & 0xc0) | (uint8_t)diff);
        return;
    }
    uint64_t old = 0;
    for (unsigned i = 0; i < width; i++)
        old |= (uint64_t)p[i] << (8 * i);
    uint64_t v = set ? (uint64_t)diff : old + (uint64_t)diff;
    if (width < 8 && (diff < 0 || (uint64_t)diff >> (8 * width)))
        die("label difference %lld does not fit %u bytes", (long long)diff, width);
    for (unsigned i = 0; i < width; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/*
 * Resolve label-difference pairs inside the template into `eh` (a copy of
 * .eh_frame). Returns the one remaining relocation (the FDE's pc_begin
 * candidate); dies on anything else.
 */
static rela resolve_eh_relocations(const object *o, const template_info *t, size_t eh_index, uint8_t *eh,
                                   size_t eh_size)
{
    size_t n;
    rela *r = relocations_for(o, eh_index, &n);
    rela remaining = {0};
    int have_remaining = 0;
    for (size_t i = 0; i < n; i++) {
        int set = 0;
        unsigned width = i + 1 < n && r[i + 1].offset == r[i].offset
                             ? riscv_pair_width(r[i].type, r[i + 1].type, &set)
                             : 0;
        if (o->mach->em == EM_RISCV_ && width) {
            int64_t diff = (int64_t)(template_label(o, t, &r[i]) - template_label(o, t, &r[i + 1]));
            apply_difference(eh, eh_size, &r[i], width, set, diff);
            i++;
            continue;
        }
        if (have_remaining || r[i].type != o->mach->pc_begin_reloc)
            die(".eh_frame relocation type %u at %llu: only the FDE's pc_begin may be relocated", r[i].type,
                (unsigned long long)r[i].offset);
        remaining = r[i];
        have_remaining = 1;
    }
    free(r);
    if (!have_remaining)
        die(".eh_frame has no relocation for the FDE's pc_begin");
    return remaining;
}

/* ---- .eh_frame parsing --------------------------------------------------- */

typedef struct cie_info {
    uint64_t offset;
    uint64_t code_align, ra;
    int64_t data_align;
    uint8_t fde_encoding;
    int has_z;
    bytes insns;
} cie_info;

typedef struct fde_info {
    uint64_t offset, pc_begin_field;
    uint64_t cie_offset;
    uint64_t range;
    bytes insns;
} fde_info;

static void parse_cie(bytes entry, uint64_t offset, cie_info *cie)
{
    cursor c = {entry, 8};
    cie->offset = offset;
    uint8_t version = (uint8_t)cur_uint(&c, 1, "CIE version");
    if (version != 1 && version != 3)
        die("CIE version %u is not supported", version);
    const char *aug = (const char *)entry.p + c.pos;
    const uint8_t *aug_end = memchr(entry.p + c.pos, 0, entry.size - c.pos);
    if (!aug_end)
        die("unterminated CIE augmentation");
    c.pos = (size_t)(aug_end - entry.p) + 1;
    cie->code_align = cur_uleb(&c, "code alignment");
    cie->data_align = cur_sleb(&c, "data alignment");
    cie->ra = version == 1 ? cur_uint(&c, 1, "RA column") : cur_uleb(&c, "RA column");
    cie->fde_encoding = 0; /* absptr */
    cie->has_z = aug[0] == 'z';
    if (aug[0] && !cie->has_z)
        die("CIE augmentation \"%s\" is not supported", aug);
    if (cie->has_z) {
        uint64_t len = cur_uleb(&c, "augmentation length");
        size_t end = c.pos + (size_t)len;
        for (const char *a = aug + 1; *a; a++) {
            if (*a != 'R')
                die("CIE augmentation \"%s\" is not supported (only z and R)", aug);
            cie->fde_encoding = (uint8_t)cur_uint(&c, 1, "FDE encoding");
        }
        if (c.pos != end)
            die("CIE augmentation data length mismatch");
    }
    if (cie->fde_encoding != (DW_EH_PE_pcrel | DW_EH_PE_sdata4))
        die("FDE pointer encoding 0x%x is not pcrel|sdata4", cie->fde_encoding);
    cie->insns = sub_bytes(entry, c.pos, entry.size - c.pos, "CIE instructions");
}

static void parse_fde(bytes entry, uint64_t offset, const cie_info *cie, fde_info *fde)
{
    cursor c = {entry, 8};
    fde->offset = offset;
    fde->pc_begin_field = offset + 8;
    (void)cur_uint(&c, 4, "pc_begin"); /* zero: relocated, checked via the relocation */
    fde->range = cur_uint(&c, 4, "pc_range");
    if (cie->has_z) {
        uint64_t len = cur_uleb(&c, "FDE augmentation length");
        if (len != 0)
            die("FDE augmentation data (LSDA) is not supported");
    }
    fde->insns = sub_bytes(entry, c.pos, entry.size - c.pos, "FDE instructions");
}

/* Walk .eh_frame: exactly one CIE... and exactly one FDE. */
static void parse_eh_frame(bytes eh, cie_info *cie, fde_info *fde)
{
    int n_cie = 0, n_fde = 0;
    uint64_t at = 0;
    while (at < eh.size) {
        uint64_t len = read_uint(eh, at, 4, "entry length");
        if (len == 0)
            break; /* terminator */
        if (len == 0xffffffffu)
            die("64-bit DWARF .eh_frame entries are not supported");
        bytes entry = sub_bytes(eh, at, 4 + len, ".eh_frame entry");
        uint64_t id = read_uint(entry, 4, 4, "CIE id");
        if (id == 0) {
            if (n_cie++)
                die(".eh_frame has more than one CIE");
            parse_cie(entry, at, cie);
        } else {
            if (n_fde++)
                die(".eh_frame has more than one FDE: the template must be the only function");
            if (!n_cie || at + 4 - id != cie->offset)
                die("the FDE does not refer to the preceding CIE");
            parse_fde(entry, at, cie, fde);
        }
        at += 4 + len;
    }
    if (!n_fde)
        die(".eh_frame has no FDE (missing .cfi_startproc?)");
}

/* ---- CFA program check --------------------------------------------------- */

/*
 * Decode a CFA program, refusing opcodes this tool does not know, and return
 * how far its advances reach (in bytes). *used is set to the length without
 * trailing DW_CFA_nop padding (the runtime pads on its own). Only call-frame instructions from
 * DWARF 5 section 6.4.2, the GNU extensions gas emits, and aarch64's
 * negate_ra_state are accepted.
 */
static uint64_t check_cfa_program(bytes insns, uint64_t code_align, int allow_advance, size_t *used)
{
    cursor c = {insns, 0};
    uint64_t loc = 0;
    *used = 0;
    while (c.pos < insns.size) {
        uint8_t op = (uint8_t)cur_uint(&c, 1, "CFA opcode");
        uint64_t advance = 0;
        switch (op & 0xc0) {
        case DW_CFA_advance_loc: advance = op & 0x3f; break;
        case DW_CFA_offset: (void)cur_uleb(&c, "offset"); break;
        case DW_CFA_restore: break;
        default:
            switch (op) {
            case DW_CFA_nop:
            case DW_CFA_remember_state:
            case DW_CFA_restore_state:
            case DW_CFA_GNU_window_save: break;
            case DW_CFA_advance_loc1: advance = cur_uint(&c, 1, "advance"); break;
            case DW_CFA_advance_loc2: advance = cur_uint(&c, 2, "advance"); break;
            case DW_CFA_advance_loc4: advance = cur_uint(&c, 4, "advance"); break;
            case DW_CFA_offset_extended:
            case DW_CFA_register:
            case DW_CFA_def_cfa:
            case DW_CFA_val_offset:
            case DW_CFA_GNU_negative_offset_extended: /* two ulebs */
                (void)cur_uleb(&c, "operand");
                (void)cur_uleb(&c, "operand");
                break;
            case DW_CFA_restore_extended:
            case DW_CFA_undefined:
            case DW_CFA_same_value:
            case DW_CFA_def_cfa_register:
            case DW_CFA_def_cfa_offset:
            case DW_CFA_GNU_args_size: /* one uleb */ (void)cur_uleb(&c, "operand"); break;
            case DW_CFA_offset_extended_sf:
            case DW_CFA_def_cfa_sf:
            case DW_CFA_val_offset_sf: /* uleb, sleb */
                (void)cur_uleb(&c, "operand");
                (void)cur_sleb(&c, "operand");
                break;
            case DW_CFA_def_cfa_offset_sf: (void)cur_sleb(&c, "operand"); break;
            default: die("CFA opcode 0x%02x is not supported (expressions, vendor ops)", op);
            }
        }
        if (advance && !allow_advance)
            die("the CIE's initial instructions advance the location");
        loc += advance * code_align;
        if (op != 0x00)
            *used = c.pos;
    }
    return loc;
}

/* ---- output --------------------------------------------------------------- */

static void emit_array(FILE *out, const char *name, const char *suffix, bytes b)
{
    fprintf(out, "static const uint8_t %s_%s[%zu] = {", name, suffix, b.size ? b.size : 1);
    for (size_t i = 0; i < b.size; i++)
        fprintf(out, "%s0x%02x,", i % 12 ? " " : "\n    ", b.p[i]);
    fprintf(out, "%s\n};\n", b.size ? "" : "0");
}

static void write_header(FILE *out, const char *name, const object *o, const template_info *t,
                         const cie_info *cie, const fde_info *fde)
{
    fprintf(out, "/* Generated by src/host/cfi-extract from the assembled %s template: do not edit. */\n",
            o->mach->arch);
    fprintf(out, "#include \"arch/template.h\"\n\n");
    emit_array(out, name, "code", t->code);
    emit_array(out, name, "cie_insns", cie->insns);
    emit_array(out, name, "fde_insns", fde->insns);
    fprintf(out,
            "\nstatic const jf__template %s = {\n"
            "    .arch = \"%s\",\n"
            "    .elf_machine = %u,\n"
            "    .code = %s_code,\n"
            "    .code_size = %zu,\n"
            "    .slot = {%s, %llu, %llu, %lld},\n"
            "    .cie = {%llu, %lld, %llu, %s_cie_insns, %zu},\n"
            "    .fde_insns = %s_fde_insns,\n"
            "    .n_fde_insns = %zu,\n"
            "};\n",
            name, o->mach->arch, o->mach->em, name, t->code.size, t->slot_kind,
            (unsigned long long)t->slot_at, (unsigned long long)t->slot_at_lo, (long long)t->slot_addend,
            (unsigned long long)cie->code_align, (long long)cie->data_align, (unsigned long long)cie->ra,
            name, cie->insns.size, name, fde->insns.size);
}

static bytes read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        die("cannot open: %s", strerror(errno));
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (!buf)
            die("out of memory");
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        cap *= 2;
        buf = realloc(buf, cap);
    }
    if (ferror(f))
        die("read error");
    fclose(f);
    return (bytes){buf, n, 0};
}

static int valid_c_name(const char *s)
{
    if (!*s || (*s >= '0' && *s <= '9'))
        return 0;
    for (; *s; s++)
        if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')))
            return 0;
    return 1;
}

int main(int argc, char **argv)
{
    const char *name = "jf__template_host";
    int arg = 1;
    if (argc == 5 && strcmp(argv[1], "--name") == 0) {
        name = argv[2];
        arg = 3;
    }
    if (argc - arg != 2 || !valid_c_name(name)) {
        fprintf(stderr, "usage: cfi-extract [--name C_IDENTIFIER] TEMPLATE.o OUT.h\n");
        return 2;
    }
    input_path = argv[arg];
    object o = {read_file(argv[arg]), NULL, NULL, 0, 0};
    read_header(&o);
    template_info t = find_template(&o);

    size_t eh_index = find_section(&o, ".eh_frame");
    bytes eh_orig = section_data(&o, eh_index);
    uint8_t *eh_copy = malloc(eh_orig.size ? eh_orig.size : 1);
    if (!eh_copy)
        die("out of memory");
    memcpy(eh_copy, eh_orig.p, eh_orig.size);
    cie_info cie;
    fde_info fde;
    parse_eh_frame(eh_orig, &cie, &fde); /* structure first: one CIE, one FDE */
    rela pc_begin = resolve_eh_relocations(&o, &t, eh_index, eh_copy, eh_orig.size);
    bytes eh = {eh_copy, eh_orig.size, eh_orig.big_endian};
    parse_eh_frame(eh, &cie, &fde);
    if (pc_begin.offset != fde.pc_begin_field)
        die("the .eh_frame relocation at %llu is not the FDE's pc_begin (at %llu)",
            (unsigned long long)pc_begin.offset, (unsigned long long)fde.pc_begin_field);
    if (template_label(&o, &t, &pc_begin) != t.sym.value)
        die("the FDE does not start at " TEMPLATE_SYMBOL);
    if (fde.range != t.sym.size)
        die("the FDE covers %llu bytes, the template has %llu", (unsigned long long)fde.range,
            (unsigned long long)t.sym.size);
    check_cfa_program(cie.insns, cie.code_align, 0, &cie.insns.size);
    if (check_cfa_program(fde.insns, cie.code_align, 1, &fde.insns.size) >= t.sym.size)
        die("the FDE's CFA program advances past the end of the template");

    FILE *out = fopen(argv[arg + 1], "w");
    if (!out) {
        input_path = argv[arg + 1];
        die("cannot create: %s", strerror(errno));
    }
    write_header(out, name, &o, &t, &cie, &fde);
    if (fclose(out) != 0) {
        input_path = argv[arg + 1];
        die("write error: %s", strerror(errno));
    }
    free(eh_copy);
    free(o.sections);
    free((void *)o.file.p);
    return 0;
}
