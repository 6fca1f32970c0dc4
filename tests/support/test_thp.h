/* Whether the kernel gives transparent huge pages to a mapping advised
 * MADV_HUGEPAGE: /sys/kernel/mm/transparent_hugepage/enabled is [always]
 * or [madvise]. Header-only, for the tests of what lives in huge pages. */
#ifndef JF_TEST_THP_H
#define JF_TEST_THP_H

#include <stdio.h>
#include <string.h>

static inline int test_thp_for_advised(void)
{
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    char buf[128] = "";
    if (f) {
        if (!fgets(buf, sizeof buf, f))
            buf[0] = '\0';
        fclose(f);
    }
    return strstr(buf, "[always]") || strstr(buf, "[madvise]");
}

#endif
