/* Tests only: a minimal ELF64 file around an unwind image (see elf_wrap.h). */
#include "elf_wrap.h"

#include "byte_writer.h"

enum { EHDR_SIZE = 64, SHDR_SIZE = 64 };

/* Section names; the hdr comes first so libdw uses its search table. */
static const char shstrtab[] = "\0.text\0.eh_frame_hdr\0.eh_frame\0.shstrtab";
enum { NAME_TEXT = 1, NAME_HDR = 7, NAME_EH = 21, NAME_SHSTRTAB = 31 };

static void put_ehdr(jf__writer *w, uint16_t machine, uint64_t shoff, uint16_t shnum)
{
    const uint8_t ident[16] = {0x7f, 'E', 'L', 'F', 2 /* 64-bit */, w->big_endian ? 2 : 1, 1};
    jf__put_bytes(w, ident, sizeof ident);
    jf__put_u16(w, 3); /* ET_DYN */
    jf__put_u16(w, machine);
    jf__put_u32(w, 1);
    jf__put_u64(w, 0); /* entry */
    jf__put_u64(w, 0); /* phoff */
    jf__put_u64(w, shoff);
    jf__put_u32(w, machine == 243 ? 0x5 : 0); /* riscv: RVC, double-float ABI */
    jf__put_u16(w, EHDR_SIZE);
    jf__put_u16(w, 0);
    jf__put_u16(w, 0);
    jf__put_u16(w, SHDR_SIZE);
    jf__put_u16(w, shnum);
    jf__put_u16(w, (uint16_t)(shnum - 1)); /* .shstrtab is last */
}

static void put_shdr(jf__writer *w, uint32_t name, uint32_t type, uint64_t flags, uint64_t addr, uint64_t off,
                     uint64_t size, uint64_t align)
{
    jf__put_u32(w, name);
    jf__put_u32(w, type);
    jf__put_u64(w, flags);
    jf__put_u64(w, addr);
    jf__put_u64(w, off);
    jf__put_u64(w, size);
    jf__put_u32(w, 0);
    jf__put_u32(w, 0);
    jf__put_u64(w, align);
    jf__put_u64(w, 0);
}

size_t elf_wrap(const elf_wrap_input *in, uint8_t *buf, size_t cap)
{
    enum { SHT_PROGBITS = 1, SHT_STRTAB = 3, SHT_NOBITS = 8, SHF_ALLOC = 2, SHF_EXECINSTR = 4 };
    size_t eh_off = EHDR_SIZE, hdr_off = eh_off + in->eh_frame_size;
    size_t str_off = hdr_off + in->hdr_size;
    size_t shoff = (str_off + sizeof shstrtab + 7) & ~(size_t)7;
    uint16_t shnum = in->with_hdr ? 5 : 4;
    jf__writer w;
    jf__writer_init(&w, buf, cap);
    put_ehdr(&w, in->machine, shoff, shnum);
    jf__put_bytes(&w, in->image, in->eh_frame_size + in->hdr_size);
    jf__put_bytes(&w, shstrtab, sizeof shstrtab);
    jf__put_align(&w, 8);
    put_shdr(&w, 0, 0, 0, 0, 0, 0, 0);
    put_shdr(&w, NAME_TEXT, SHT_NOBITS, SHF_ALLOC | SHF_EXECINSTR, in->text_addr, eh_off, in->text_size, 16);
    if (in->with_hdr)
        put_shdr(&w, NAME_HDR, SHT_PROGBITS, SHF_ALLOC, in->eh_addr + in->eh_frame_size, hdr_off,
                 in->hdr_size, 4);
    put_shdr(&w, NAME_EH, SHT_PROGBITS, SHF_ALLOC, in->eh_addr, eh_off, in->eh_frame_size, 8);
    put_shdr(&w, NAME_SHSTRTAB, SHT_STRTAB, 0, 0, str_off, sizeof shstrtab, 1);
    return jf__writer_ok(&w) ? w.pos : 0;
}
