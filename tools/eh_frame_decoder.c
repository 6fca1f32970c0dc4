/* placeholder */
#include "eh_frame_decoder.h"
void ehf_free(ehf_table *t) { (void)t; }
