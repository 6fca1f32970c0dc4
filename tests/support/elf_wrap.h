/*
 * Tests only: wrap an emitted .eh_frame/.eh_frame_hdr image into a minimal
 * ELF64 file so independent readers (libdw, readelf, llvm-dwarfdump) can
 * check it. .text is SHT_NOBITS (the CFI only needs its address range).
 */
#ifndef JF_TEST_ELF_WRAP_H
#define JF_TEST_ELF_WRAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct elf_wrap_input {
    uint16_t machine;
    uint64_t text_addr, text_size;
    uint64_t eh_addr;     /* .eh_frame address; .eh_frame_hdr follows it */
    const uint8_t *image; /* eh_frame bytes then hdr bytes */
    size_t eh_frame_size, hdr_size;
    int with_hdr; /* 0: omit .eh_frame_hdr (readers then scan .eh_frame) */
} elf_wrap_input;

/* Write the ELF file into buf; returns its size, or 0 if cap is too small. */
size_t elf_wrap(const elf_wrap_input *in, uint8_t *buf, size_t cap);

#endif
