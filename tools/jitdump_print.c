/* placeholder */
#include "jitdump_reader.h"
const char *jd_record_name(uint32_t id) { (void)id; return "unknown"; }
