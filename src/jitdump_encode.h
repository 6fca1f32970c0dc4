/*
 * The jitdump format's records, encoded through the bounds-checked writer:
 * the one encoder for every jitdump this project writes, the sink
 * (sink_jitdump.c) and `jitframes perfmap --jitdump` / `record`
 * (tools/cli/table_jitdump.c). No state and no I/O: callers own the bytes.
 * The format is perf's (tools/perf/util/jitdump.c, jitdump-specification.txt;
 * docs/formats.md, "Jitdump"); integers go out in the writer's byte order,
 * the host's, as perf expects of a dump written on this machine. The
 * per-record encoders are inline: the sink calls them for every region, and
 * out of line they cost it 4% more instructions (bench_jitdump, callgrind).
 */
#ifndef JF_JITDUMP_ENCODE_H
#define JF_JITDUMP_ENCODE_H

#include "arch/host.h"
#include "byte_writer.h"
#include "jitframes.h"
#include "sys.h"

#include <stddef.h>
#include <stdint.h>

#define JITDUMP_MAGIC 0x4A695444u
#define JITDUMP_VERSION 1u

enum jf__jitdump_record_id {
    JIT_CODE_LOAD = 0,
    JIT_CODE_MOVE = 1,
    JIT_CODE_DEBUG_INFO = 2,
    JIT_CODE_CLOSE = 3,
    JIT_CODE_UNWINDING_INFO = 4,
};

enum {
    JITDUMP_HEADER_SIZE = 40,        /* magic, version, size, mach, reserved, pid, timestamp, flags */
    JITDUMP_RECORD_HEADER_SIZE = 16, /* id u32, total_size u32, timestamp u64 */
    JITDUMP_CODE_LOAD_FIXED = JITDUMP_RECORD_HEADER_SIZE +
                              40, /* pid, tid, vma, code_addr, code_size, index */
    JITDUMP_DEBUG_INFO_FIXED = JITDUMP_RECORD_HEADER_SIZE + 16, /* code_addr, nr_entry */
    JITDUMP_DEBUG_ENTRY_FIXED = 16,                             /* addr u64, lineno u32, discrim u32 */
    JITDUMP_UNWIND_FIXED = JITDUMP_RECORD_HEADER_SIZE + 24,     /* data size, hdr_size, mapped_size */
    JITDUMP_CODE_MOVE_SIZE = JITDUMP_RECORD_HEADER_SIZE + 48,   /* pid, tid, vma, old/new addr, size, index */
    JITDUMP_RECORD_ALIGN = 8, /* debug and unwinding records are padded to this */
};

/* x86_64 and aarch64 store 4 unaligned bytes with one instruction. Elsewhere
 * (riscv64: gcc emits four byte stores) the store that publishes a group
 * must be aligned: CODE_LOAD records, the only unpadded ones, then get up to
 * 3 more nonce bytes so that every record starts 4-aligned. */
#define JITDUMP_LOAD_PAD_MAX (JF_HOST_UNALIGNED_STORE32_ATOMIC ? 0u : 3u)

/* Bytes after `code_size` bytes of code in a CODE_LOAD whose name is
 * `name_len` bytes (without its NUL): the JF_JITDUMP_NONCE_SIZE-byte nonce,
 * then zeros up to 4-alignment where JITDUMP_LOAD_PAD_MAX asks for it. */
size_t jf__jitdump_nonce_size(size_t name_len, size_t code_size);

/* A seed that differs from run to run and process to process; the nonce of
 * code index i is jf__jitdump_nonce(seed, i): distinct indices, distinct
 * nonces. */
uint64_t jf__jitdump_nonce_seed(void);

/* A bijection on 64-bit values (splitmix64's finaliser). */
static inline uint64_t jf__jitdump_mix64(uint64_t x)
{
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
    return x ^ (x >> 31);
}

static inline uint64_t jf__jitdump_nonce(uint64_t seed, uint64_t index)
{
    return jf__jitdump_mix64(seed + index);
}

/* perf maps round8(code_size) + mapped_size bytes for a CODE_LOAD with
 * unwind data: the mapped_size that covers `unwind_data_size` bytes exactly
 * (the data is padded to 8), no more, so that packed regions such as
 * trampolines can sit as close together as possible without their mappings
 * overlapping. */
static inline size_t jf__jitdump_mapped_size(size_t unwind_data_size)
{
    return jf__round_up(unwind_data_size, 8);
}

void jf__jitdump_put_file_header(jf__writer *w, uint32_t pid, uint64_t timestamp);

/* Start a record (its size 0 until jf__jitdump_end_record); returns where
 * it starts. */
static inline size_t jf__jitdump_begin_record(jf__writer *w, uint32_t id, uint64_t timestamp)
{
    size_t start = w->pos;
    jf__put_u32(w, id);
    jf__put_u32(w, 0); /* total size, stored by jf__jitdump_end_record */
    jf__put_u64(w, timestamp);
    return start;
}

/* Pad the record that started at `start` to `align` (1: no padding) and
 * return its size; jf__jitdump_end_record also stores it in the record. */
static inline uint32_t jf__jitdump_pad_record(jf__writer *w, size_t start, size_t align)
{
    size_t len = w->pos - start;
    if (align > 1 && len % align)
        jf__put_zeros(w, align - len % align);
    return (uint32_t)(w->pos - start);
}
static inline void jf__jitdump_end_record(jf__writer *w, size_t start, size_t align)
{
    jf__patch_u32(w, start + 4, jf__jitdump_pad_record(w, start, align));
}

/* DEBUG_INFO: after begin_record, the head, then nr_entry entries. perf
 * ends the line sequence at the last entry, which therefore covers nothing:
 * writers close it with an entry at the CODE_LOAD's end. */
static inline void jf__jitdump_put_debug_head(jf__writer *w, uint64_t code_addr, uint64_t nr_entry)
{
    jf__put_u64(w, code_addr);
    jf__put_u64(w, nr_entry);
}
static inline void jf__jitdump_put_debug_entry(jf__writer *w, uint64_t addr, uint32_t line, const char *file)
{
    jf__put_u64(w, addr);
    jf__put_u32(w, line);
    jf__put_u32(w, 0); /* discriminator */
    jf__put_cstr(w, file);
}

/* CODE_UNWINDING_INFO: after begin_record, 24 bytes of sizes (reserve them
 * with jf__put_zeros and store them with this once the data is written),
 * then the .eh_frame and .eh_frame_hdr data. */
static inline void jf__jitdump_set_unwinding_sizes(jf__writer *w, size_t at, uint64_t data_size,
                                                   uint64_t hdr_size, uint64_t mapped_size)
{
    jf__patch_u64(w, at, data_size);
    jf__patch_u64(w, at + 8, hdr_size);
    jf__patch_u64(w, at + 16, mapped_size);
}

/* A CODE_LOAD: `size` bytes of code (NULL: zeros in their place), then
 * nonce_size bytes of nonce (0: none; else jf__jitdump_nonce_size's). */
typedef struct jf__jitdump_load {
    uint32_t pid;
    uint32_t tid;
    uint64_t addr; /* vma and code_addr */
    uint64_t index;
    const char *name;
    const void *code;
    size_t size;
    size_t nonce_size;
    uint64_t nonce;
} jf__jitdump_load;

/* The whole record but its size: returns where it starts (end it with
 * alignment 1: perf takes the code from a CODE_LOAD's last code_size bytes). */
static inline size_t jf__jitdump_put_code_load(jf__writer *w, const jf__jitdump_load *l, uint64_t timestamp)
{
    size_t start = jf__jitdump_begin_record(w, JIT_CODE_LOAD, timestamp);
    jf__put_u32(w, l->pid);
    jf__put_u32(w, l->tid);
    jf__put_u64(w, l->addr); /* vma */
    jf__put_u64(w, l->addr); /* code_addr */
    jf__put_u64(w, (uint64_t)l->size + l->nonce_size);
    jf__put_u64(w, l->index);
    jf__put_cstr(w, l->name);
    if (l->code)
        jf__put_bytes(w, l->code, l->size);
    else
        jf__put_zeros(w, l->size);
    if (l->nonce_size) {
        jf__put_u64(w, l->nonce);
        jf__put_zeros(w, l->nonce_size - JF_JITDUMP_NONCE_SIZE);
    }
    return start;
}

/* A CODE_MOVE but its size (end it with alignment 1): perf inject maps the
 * object it made for code index `index` at new_addr. `size` is the
 * CODE_LOAD's code_size. Returns where it starts. */
static inline size_t jf__jitdump_put_code_move(jf__writer *w, uint32_t pid, uint32_t tid, uint64_t old_addr,
                                               uint64_t new_addr, uint64_t size, uint64_t index,
                                               uint64_t timestamp)
{
    size_t start = jf__jitdump_begin_record(w, JIT_CODE_MOVE, timestamp);
    jf__put_u32(w, pid);
    jf__put_u32(w, tid);
    jf__put_u64(w, new_addr); /* vma */
    jf__put_u64(w, old_addr);
    jf__put_u64(w, new_addr);
    jf__put_u64(w, size);
    jf__put_u64(w, index);
    return start;
}

#endif
