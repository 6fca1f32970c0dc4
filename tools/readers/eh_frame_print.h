/* Printing a decoded .eh_frame (see eh_frame_print.c). */
#ifndef JFT_EH_FRAME_PRINT_H
#define JFT_EH_FRAME_PRINT_H

#include "eh_frame_decoder.h"

#include <stdio.h>

/* CIEs, FDEs and each FDE's CFA rows, indented for a dump. */
void ehf_print_table(FILE *out, uint32_t mach, const uint8_t *data, size_t len, const ehf_layout *layout,
                     const ehf_table *t);

#endif
