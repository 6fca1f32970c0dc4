/*
 * `jitframes dump` for jitdumps: every record decoded, the unwinding info
 * down to the CFA rule of every pc range (code offsets).
 */
#include "eh_frame_print.h"
#include "jitdump_reader.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

typedef struct printer {
    FILE *out;
    uint32_t elf_mach;
} printer;

static const char *machine_name(uint32_t m)
{
    switch (m) {
    case 3: return "i386";
    case 21: return "ppc64";
    case 22: return "s390";
    case 40: return "arm";
    case 62: return "x86_64";
    case 183: return "aarch64";
    case 243: return "riscv";
    default: return "?";
    }
}

static void print_header(void *ctx, const jd_header *h)
{
    printer *p = ctx;
    p->elf_mach = h->elf_mach;
    fprintf(p->out,
            "header: %s-endian, version %u, size %u, elf_mach %u (%s), reserved %u, pid %u, "
            "timestamp %" PRIu64 ", flags 0x%" PRIx64 "\n",
            h->big_endian ? "big" : "little", h->version, h->total_size, h->elf_mach,
            machine_name(h->elf_mach), h->reserved, h->pid, h->timestamp, h->flags);
}

static void print_unwind(printer *p, const jd_unwind *u)
{
    fprintf(p->out,
            "    unwinding_size %" PRIu64 " (.eh_frame %" PRIu64 ", .eh_frame_hdr %" PRIu64
            "), mapped_size %" PRIu64 "\n",
            u->unwinding_size, u->eh_frame_size, u->eh_frame_hdr_size, u->mapped_size);
    if (u->table)
        ehf_print_table(p->out, p->elf_mach, u->eh_frame, (size_t)u->eh_frame_size, &u->layout, u->table);
}

static void print_record(void *ctx, const jd_record *r, uint32_t elf_mach)
{
    printer *p = ctx;
    p->elf_mach = elf_mach;
    fprintf(p->out, "0x%08" PRIx64 " #%" PRIu64 " %s size %u ts %" PRIu64 "\n", r->offset, r->index,
            jd_record_name(r->id), r->total_size, r->timestamp);
    switch (r->id) {
    case JD_CODE_LOAD: {
        const jd_load *l = &r->u.load;
        fprintf(p->out,
                "    pid %u tid %u vma 0x%" PRIx64 " code_addr 0x%" PRIx64 " code_size %" PRIu64
                " code_index %" PRIu64 " name \"%s\"\n",
                l->pid, l->tid, l->vma, l->code_addr, l->code_size, l->code_index, l->name ? l->name : "");
        break;
    }
    case JD_CODE_MOVE: {
        const jd_move *m = &r->u.move;
        fprintf(p->out,
                "    pid %u tid %u vma 0x%" PRIx64 " 0x%" PRIx64 " -> 0x%" PRIx64 " code_size %" PRIu64
                " code_index %" PRIu64 "\n",
                m->pid, m->tid, m->vma, m->old_code_addr, m->new_code_addr, m->code_size, m->code_index);
        break;
    }
    case JD_CODE_DEBUG_INFO: {
        const jd_debug *d = &r->u.debug;
        fprintf(p->out, "    code_addr 0x%" PRIx64 ", %" PRIu64 " entries\n", d->code_addr, d->nr_entry);
        for (uint64_t i = 0; d->lines && i < d->nr_entry; i++)
            fprintf(p->out, "      0x%" PRIx64 " (+0x%" PRIx64 ")  %s:%u%s\n", d->lines[i].addr,
                    d->lines[i].addr - d->code_addr, d->lines[i].file ? d->lines[i].file : "?",
                    d->lines[i].lineno, d->lines[i].discrim ? " (discriminator)" : "");
        break;
    }
    case JD_CODE_UNWINDING_INFO: print_unwind(p, &r->u.unwind); break;
    default: break;
    }
}

int jd_dump_stream(jft_stream *in, void *out_file, jd_summary *summary, jft_error *err)
{
    printer p = {out_file, 0};
    jd_visitor v = {print_header, print_record};
    return jd_walk_stream(in, &v, &p, 1, summary, err);
}

int jd_dump(const uint8_t *buf, size_t len, void *out_file, jd_summary *summary, jft_error *err)
{
    jft_stream in;
    jft_stream_from_buffer(&in, buf, len);
    return jd_dump_stream(&in, out_file, summary, err);
}
