/*
 * DWARF call frame information constants, declared once for the library
 * (src/cfi.c) and the build-time extractor (src/host/cfi-extract.c). The
 * validators (tools/readers/eh_frame_decoder.c, tests/) keep their own on purpose:
 * they are independent readers that check what these produce.
 */
#ifndef JF_DWARF_CFA_H
#define JF_DWARF_CFA_H

/* DWARF call frame instruction opcodes (DWARF 5, 6.4.2; GNU extensions). */
enum {
    DW_CFA_nop = 0x00,
    DW_CFA_set_loc = 0x01,
    DW_CFA_advance_loc1 = 0x02,
    DW_CFA_advance_loc2 = 0x03,
    DW_CFA_advance_loc4 = 0x04,
    DW_CFA_offset_extended = 0x05,
    DW_CFA_restore_extended = 0x06,
    DW_CFA_undefined = 0x07,
    DW_CFA_same_value = 0x08,
    DW_CFA_register = 0x09,
    DW_CFA_remember_state = 0x0a,
    DW_CFA_restore_state = 0x0b,
    DW_CFA_def_cfa = 0x0c,
    DW_CFA_def_cfa_register = 0x0d,
    DW_CFA_def_cfa_offset = 0x0e,
    DW_CFA_def_cfa_expression = 0x0f,
    DW_CFA_expression = 0x10,
    DW_CFA_offset_extended_sf = 0x11,
    DW_CFA_def_cfa_sf = 0x12,
    DW_CFA_def_cfa_offset_sf = 0x13,
    DW_CFA_val_offset = 0x14,
    DW_CFA_val_offset_sf = 0x15,
    DW_CFA_val_expression = 0x16,
    DW_CFA_GNU_window_save = 0x2d, /* aarch64: negate_ra_state */
    DW_CFA_GNU_args_size = 0x2e,
    DW_CFA_GNU_negative_offset_extended = 0x2f,
    DW_CFA_advance_loc = 0x40, /* high 2 bits; low 6: delta */
    DW_CFA_offset = 0x80,      /* low 6: register; ULEB128 factored offset */
    DW_CFA_restore = 0xc0,     /* low 6: register */
};

/* Pointer encodings (LSB Core, .eh_frame). */
enum {
    DW_EH_PE_absptr = 0x00,
    DW_EH_PE_udata4 = 0x03,
    DW_EH_PE_sdata4 = 0x0b,
    DW_EH_PE_pcrel = 0x10,
    DW_EH_PE_datarel = 0x30,
    DW_EH_PE_omit = 0xff,
};

#endif
