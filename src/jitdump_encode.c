/*
 * The jitdump encoders that run once per file or only on hosts that pad
 * (the per-record ones are inline in jitdump_encode.h).
 */
#include "jitdump_encode.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

size_t jf__jitdump_nonce_size(size_t name_len, size_t code_size)
{
    if (!JITDUMP_LOAD_PAD_MAX)
        return JF_JITDUMP_NONCE_SIZE;
    size_t unpadded = JITDUMP_CODE_LOAD_FIXED + name_len + 1 + code_size + JF_JITDUMP_NONCE_SIZE;
    return JF_JITDUMP_NONCE_SIZE + (4 - unpadded % 4) % 4;
}

uint64_t jf__jitdump_nonce_seed(void)
{
    return jf__jitdump_mix64(jf__monotonic_ns() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)time(NULL));
}

void jf__jitdump_put_file_header(jf__writer *w, uint32_t pid, uint64_t timestamp)
{
    jf__put_u32(w, JITDUMP_MAGIC);
    jf__put_u32(w, JITDUMP_VERSION);
    jf__put_u32(w, JITDUMP_HEADER_SIZE);
    jf__put_u32(w, JF_HOST_ELF_MACHINE);
    jf__put_u32(w, 0); /* reserved */
    jf__put_u32(w, pid);
    jf__put_u64(w, timestamp);
    jf__put_u64(w, 0); /* flags: no arch timestamps, nothing else */
}
