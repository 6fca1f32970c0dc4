/*
 * Checking trace_frame.c's model against the running VM.
 *
 * The model (CFA = rsp + CFRAME_SIZE_JIT + the trace's adjustment, return
 * address at CFA - 8) comes from LuaJIT's sources; a LuaJIT built another
 * way would make gdb unwind into garbage. So the model is tested once, on a
 * live trace, before any unwind rule is published: the probe function,
 * called from a trace, copies the stack above its caller's stack pointer;
 * afterwards the word the model names as the return address must point into
 * the function that entered the VM (dladdr: the same symbol as lua_pcall).
 */
#define _GNU_SOURCE
#include "layout_probe.h"

#include "trace_frame.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* The trace's frame (96 bytes and its adjustment, small in the probe's
 * loop) and the word above it; the frames above the caller (lua_pcall's,
 * the C function that called it, the VM frame that called that) are larger. */
enum { SAMPLE_BYTES = 256 };

static struct {
    const void *return_address;  /* into the trace */
    uint8_t stack[SAMPLE_BYTES]; /* from the caller's stack pointer up */
} sample;

/* It reads other functions' frames on purpose: not an error for ASan. */
__attribute__((noinline, no_sanitize("address"))) void layout_probe_hit(void)
{
    /* The CFA of this function is the caller's stack pointer before the call. */
    const volatile uint8_t *caller_sp = __builtin_dwarf_cfa();
    sample.return_address = __builtin_return_address(0);
    for (size_t i = 0; i < sizeof sample.stack; i++)
        sample.stack[i] = caller_sp[i];
}

const void *layout_probe_return_address(void)
{
    return sample.return_address;
}

/* The function holding addr, as dladdr names it (NULL if none). */
static const void *function_of(const void *addr)
{
    Dl_info info;
    return dladdr(addr, &info) && info.dli_saddr ? info.dli_saddr : NULL;
}

int layout_probe_check(const uint8_t *code, size_t size, int64_t parent_spadjust, const void *entry,
                       char *why, size_t why_size)
{
    const uint8_t *ra = sample.return_address;
    if (!ra || ra < code || ra >= code + size) {
        snprintf(why, why_size, "the probe was not called from the trace");
        return -1;
    }
    const trace_isa *isa = trace_isa_host();
    if (!isa) {
        snprintf(why, why_size, "LuaJIT's trace frames are not known on this architecture");
        return -1;
    }
    trace_frame frame;
    trace_frame_read(isa, code, size, parent_spadjust, &frame);
    size_t slot = trace_frame_cfa_offset(&frame, (size_t)(ra - code)) - sizeof(void *);
    if (slot + sizeof(void *) > sizeof sample.stack) {
        snprintf(why, why_size, "the trace's frame (%zu bytes) is larger than the sample", slot);
        return -1;
    }
    const void *found;
    memcpy(&found, sample.stack + slot, sizeof found);
    const void *in = function_of(found), *want = function_of(entry);
    if (!want || in != want) {
        Dl_info info = {0};
        int named = found && dladdr(found, &info) && info.dli_sname;
        snprintf(why, why_size,
                 "LuaJIT's trace frame is not laid out as expected: the return address at "
                 "CFA-8 (rsp+%zu) is %p (%s), not into lua_pcall",
                 slot + sizeof(void *), found, named ? info.dli_sname : "no symbol");
        return -1;
    }
    return 0;
}
