/*
 * Negative control for the fuzz test's plumbing: a target that aborts on
 * the input "CRASH" (in its seed corpus). run_fuzz.sh must fail on it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size >= 5 && memcmp(data, "CRASH", 5) == 0)
        abort();
    return 0;
}
