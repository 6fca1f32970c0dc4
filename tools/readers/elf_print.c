/* `jitframes dump` for GDB JIT symfiles: sections, symbols, CFA rules. */
#include "eh_frame_print.h"
#include "elf_reader.h"

#include <inttypes.h>
#include <stdio.h>

static void print_header(void *ctx, const elf_info *i)
{
    fprintf(ctx, "ELF64 %s-endian, type %u, machine %u, %u sections, %u program headers\n",
            i->big_endian ? "big" : "little", i->type, i->machine, i->shnum, i->phnum);
}

static void print_section(void *ctx, size_t index, const elf_section *s)
{
    fprintf(ctx,
            "  section %2zu %-16s type %2u flags 0x%03" PRIx64 " addr 0x%016" PRIx64 " size 0x%" PRIx64 "\n",
            index, s->name, s->type, s->flags, s->addr, s->size);
}

static void print_symbol(void *ctx, size_t index, const elf_symbol *sym)
{
    if (sym->type != 2) /* FUNC */
        return;
    fprintf(ctx, "  symbol %4zu 0x%016" PRIx64 "-0x%016" PRIx64 " section %u  %s\n", index, sym->addr,
            sym->addr + sym->size, sym->shndx, sym->name);
}

static void print_eh_frame(void *ctx, const uint8_t *data, size_t len, const ehf_layout *layout,
                           const ehf_table *t, uint16_t machine)
{
    fprintf(ctx, "  .eh_frame at 0x%" PRIx64 ": %zu CIEs, %zu FDEs\n", (uint64_t)layout->section_addr,
            t->n_cies, t->n_fdes);
    ehf_print_table(ctx, machine, data, len, layout, t);
}

int elf_dump(const uint8_t *buf, size_t len, void *out, elf_summary *summary, jft_error *err)
{
    elf_visitor v = {print_header, print_section, print_symbol, print_eh_frame};
    return elf_walk(buf, len, &v, out, 1, summary, err);
}
