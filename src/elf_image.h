/*
 * A minimal ELF64 object writer for GDB JIT symfiles (docs/formats.md, "GDB JIT
 * interface"). The image describes code that already lives in memory: it
 * never contains the code, only where it is, its names, its unwind rules and
 * its source lines.
 */
#ifndef JF_ELF_IMAGE_H
#define JF_ELF_IMAGE_H

#include "region.h"

#include <stddef.h>
#include <stdint.h>

/* An address range [lo, hi) that becomes one SHT_NOBITS .text section and
 * one PT_LOAD segment with the same bounds. */
typedef struct jf__elf_span {
    uint64_t lo;
    uint64_t hi;
} jf__elf_span;

/* A built image, in memory of its own (malloc). It must not move while
 * registered: the debugger reads it in place, and its section addresses
 * (.eh_frame's sh_addr) are where these very bytes live. */
typedef struct jf__elf_image {
    uint8_t *bytes;
    size_t size;
} jf__elf_image;

/* The most .text sections one image may have (section indices stay below
 * SHN_LORESERVE, so no extended numbering is needed). */
#define JF_ELF_MAX_SPANS 0xfe00u

/*
 * Build an ET_REL symfile for the host machine describing `n` regions sorted
 * by start address, every one of them inside one of the `n_spans` spans
 * (sorted, disjoint, at most JF_ELF_MAX_SPANS):
 *   .text (one per span)  SHT_NOBITS at the span's address
 *   .symtab/.strtab       a FUNC symbol with its size per region; st_value
 *                         relative to its .text section, as for ET_REL
 *   .eh_frame             every region's CFI, absolute layout, sh_addr = the
 *                         address of these very bytes (only if any region has CFI)
 *   .debug_abbrev/.debug_info/.debug_line
 *                         one DWARF 4 compile unit with a subprogram and a
 *                         line program per region that has source lines
 *   one PT_LOAD per span.
 * Returns 0, JF_ENOMEM, JF_ERANGE (too many spans) or the CFI emitter's error.
 */
int jf__elf_image_build(jf__live *const *regions, size_t n, const jf__elf_span *spans, size_t n_spans,
                        jf__elf_image *out);

/* Free an image (NULL bytes is fine). */
void jf__elf_image_free(jf__elf_image *image);

#endif
