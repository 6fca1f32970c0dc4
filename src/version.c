/* The library's version at run time, which may differ from the header a
 * program was compiled with (JF_VERSION_*). */
#include "error.h"

#define JF_STR2(x) #x
#define JF_STR(x) JF_STR2(x)

const char *jf_version_string(void)
{
    jf__clear_error();
    return JF_STR(JF_VERSION_MAJOR) "." JF_STR(JF_VERSION_MINOR) "." JF_STR(JF_VERSION_PATCH);
}
