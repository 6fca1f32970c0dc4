/*
 * A check, in the running process, that trace_frame.c's model of a trace's
 * frame holds for this LuaJIT: before unwind rules are handed to gdb, lldb or
 * the process's unwinder, a compiled trace calls layout_probe_hit through
 * the FFI, which samples its caller's stack; layout_probe_check then finds
 * the return address where the model says it is.
 */
#ifndef JITFRAMES_LUA_LAYOUT_PROBE_H
#define JITFRAMES_LUA_LAYOUT_PROBE_H

#include <stddef.h>
#include <stdint.h>

/* Called (through the FFI) by the probe's loop: keeps the last call's sample. */
void layout_probe_hit(void);

/* The return address of the last sampled call (NULL: none yet). */
const void *layout_probe_return_address(void);

/*
 * Check the sample taken from the trace [code, code + size) (root trace when
 * parent_spadjust < 0): the return address the model finds must lie in the
 * function that entered the VM, `entry` (lua_pcall, which ran the probe).
 * 0 if it does; otherwise -1 and why in `why`.
 */
int layout_probe_check(const uint8_t *code, size_t size, int64_t parent_spadjust, const void *entry,
                       char *why, size_t why_size);

#endif
