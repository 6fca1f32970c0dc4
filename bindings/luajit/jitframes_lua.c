/*
 * The LuaJIT client: a Lua module (`require "jitframes"`) that registers
 * every compiled trace of a stock LuaJIT (no rebuild, no perftools or GDB JIT
 * support compiled in) with jitframes, named as LuaJIT's own perftools build
 * names them: TRACE_<n>::<chunk>:<line>.
 *
 * LuaJIT reports trace events to Lua callbacks only (jit.attach), so the
 * event handling is a small Lua chunk (below); it calls into C to register.
 * Nothing here raises an error into the VM: the handler runs under pcall and
 * the C functions return status values; failures are reported once through
 * the library's log and jitframes.status().
 *
 * Unwinding through traces (gdb, lldb, the unwind sink, perf's DWARF call
 * graphs through the jitdump) needs each trace's unwind rules: trace_frame.c
 * reads them from the trace's code, after layout_probe.c has checked the
 * model on this very VM. Where that cannot be done, the gdb and unwind sinks
 * are refused with a message and the others stay on.
 */
#include "layout_probe.h"
#include "trace_frame.h"

#include <jitframes.h>
#include <lauxlib.h>
#include <lua.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Initialisations of the library made by lua_States (each start balances one). */
static int library_users;
/* Whether trace frames are described (the layout probe passed). */
static int describe_frames;

/* The parent_spadjust of trace_frame_read for the Lua value at idx: nil for
 * a root trace, the parent's adjustment, or false when the parent is unknown. */
static int64_t parent_arg(lua_State *L, int idx)
{
    if (lua_isnoneornil(L, idx))
        return TRACE_ROOT;
    return lua_isnumber(L, idx) ? (int64_t)lua_tonumber(L, idx) : TRACE_PARENT_UNKNOWN;
}

/* _register(addr, size, name, file, line, parent) -> 0 or a JF_E* code,
 * message, the trace's stack adjustment (parent: see parent_arg) */
static int l_register(lua_State *L)
{
    jf_region r = JF_REGION_INIT;
    lua_Number addr = luaL_checknumber(L, 1);
    r.addr = (const void *)(uintptr_t)addr;
    r.size = (size_t)luaL_checknumber(L, 2);
    r.name = luaL_checkstring(L, 3);
    r.file = luaL_optstring(L, 4, NULL);
    r.line = (uint32_t)luaL_optnumber(L, 5, 0);
    trace_frame frame = {0};
    jf_cfi *cfi = NULL;
    if (describe_frames) { /* set only where trace_isa_host() knows the backend */
        /* Read always: side traces compiled later need this trace's frame. */
        trace_frame_read(trace_isa_host(), r.addr, r.size, parent_arg(L, 6), &frame);
        /* gdb, lldb, the unwinder and perf's DWARF call graphs (through
         * the jitdump) use the rules; the jitdump sink writes them for the
         * traces whose mapping has room after the code (docs/luajit.md).
         * Rules that cannot be built (out of memory) leave the trace named,
         * unwound no further. */
        if ((jf_enabled_sinks() & (JF_SINK_GDB | JF_SINK_UNWIND | JF_SINK_JITDUMP)) &&
            trace_frame_cfi(&frame, r.size, &cfi) != 0)
            cfi = NULL;
    }
    r.cfi = cfi;
    int rc = jf_register(&r);
    if (rc == JF_EEXIST && jf_unregister(r.addr) == 0) /* a stale trace at a reused address */
        rc = jf_register(&r);
    jf_cfi_free(cfi);
    lua_pushinteger(L, rc);
    lua_pushstring(L, rc ? jf_last_error() : "");
    lua_pushinteger(L, frame.spadjust);
    return 3;
}

/* The layout probe (the glue's check_frames): _probe_run(fn) runs the
 * probe's loop, which calls _probe_target() through the FFI, with lua_pcall
 * (the VM entry the sample must lead back to) -> nil, or the error message;
 * _probe_return_address() -> where the last call returned to; and
 * _probe_check(addr, size) checks the sample against the trace there. */
static int l_probe_run(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TFUNCTION);
    lua_pushvalue(L, 1);
    if (lua_pcall(L, 0, 0, 0) != 0)
        return 1; /* the message */
    lua_pushnil(L);
    return 1;
}

static int l_probe_target(lua_State *L)
{
    lua_pushlightuserdata(L, (void *)(uintptr_t)layout_probe_hit);
    return 1;
}

static int l_probe_return_address(lua_State *L)
{
    const void *ra = layout_probe_return_address();
    if (ra)
        lua_pushnumber(L, (lua_Number)(uintptr_t)ra);
    else
        lua_pushnil(L);
    return 1;
}

/* _probe_check(addr, size) -> true, or nil and why (the probe's trace is a root trace) */
static int l_probe_check(lua_State *L)
{
    const uint8_t *code = (const uint8_t *)(uintptr_t)luaL_checknumber(L, 1);
    size_t size = (size_t)luaL_checknumber(L, 2);
    char why[256];
    if (layout_probe_check(code, size, TRACE_ROOT, (const void *)(uintptr_t)lua_pcall, why, sizeof why) !=
        0) {
        lua_pushnil(L);
        lua_pushstring(L, why);
        return 2;
    }
    lua_pushboolean(L, 1);
    return 1;
}

/* _unregister(addr) -> 0 or a JF_E* code */
static int l_unregister(lua_State *L)
{
    lua_pushinteger(L, jf_unregister((const void *)(uintptr_t)luaL_checknumber(L, 1)));
    return 1;
}

/* The sinks of `sinks` that need unwind rules and are refused without them. */
static unsigned refused_without_frames(unsigned sinks)
{
    return sinks & (JF_SINK_GDB | JF_SINK_UNWIND);
}

/* _needs_frames(sinks) -> whether any of the sinks uses unwind rules */
static int l_needs_frames(lua_State *L)
{
    unsigned sinks;
    int parsed = jf_parse_sinks(luaL_checkstring(L, 1), &sinks) == 0;
    lua_pushboolean(L, parsed && (sinks & (JF_SINK_GDB | JF_SINK_UNWIND | JF_SINK_JITDUMP)));
    return 1;
}

/* jf_init with these flags and sinks, the jitdump in $JITFRAMES_DIR (the
 * sinks come from the Lua side, not $JITFRAMES). */
static int init_library(unsigned flags, unsigned sinks)
{
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = flags;
    cfg.sinks = sinks;
    const char *dir = getenv("JITFRAMES_DIR");
    cfg.dump_dir = dir && *dir ? dir : NULL;
    return jf_init(&cfg);
}

/* _init(sinks, frames_checked, why) -> true [, warning], or nil and a message */
static int l_init(lua_State *L)
{
    const char *list = luaL_checkstring(L, 1);
    int frames = lua_toboolean(L, 2);
    const char *why = luaL_optstring(L, 3, "");
    unsigned sinks;
    if (jf_parse_sinks(list, &sinks) != 0 || sinks == 0) {
        lua_pushnil(L);
        lua_pushfstring(L, "jitframes: invalid sinks '%s' (%s)", list,
                        sinks == 0 && !*jf_last_error() ? "no sink named" : jf_last_error());
        return 2;
    }
    unsigned refused = frames ? 0 : refused_without_frames(sinks);
    if (refused && refused == sinks) {
        lua_pushnil(L);
        lua_pushfstring(L, "jitframes: sinks '%s' refused: %s", list, why);
        return 2;
    }
    int rc = init_library(JF_CONFIG_IGNORE_ENV, sinks & ~refused);
    if (rc != 0 && rc != JF_ESINK) {
        lua_pushnil(L);
        lua_pushfstring(L, "jitframes: %s", jf_last_error());
        return 2;
    }
    library_users++;
    describe_frames = frames;
    lua_pushboolean(L, 1);
    if (rc == JF_ESINK) { /* running, without the sink that failed */
        lua_pushfstring(L, "jitframes: %s", jf_last_error());
        return 2;
    }
    if (refused) {
        lua_pushfstring(L, "jitframes: %s%s%s refused (%s); the other sinks are on",
                        refused & JF_SINK_GDB ? jf_sink_name(JF_SINK_GDB) : "",
                        refused == (JF_SINK_GDB | JF_SINK_UNWIND) ? " and " : "",
                        refused & JF_SINK_UNWIND ? jf_sink_name(JF_SINK_UNWIND) : "", why);
        return 2;
    }
    return 1;
}

/* _standby(frames_checked, channel) -> true, or nil and a message: the
 * library with no sink: traces are kept and published in memory, where
 * `jitframes record PID` reads them; with channel (the default) its control
 * channel is open too (JF_CONFIG_CONTROL), so `jitframes enable|record PID`
 * can turn a sink on. */
static int l_standby(lua_State *L)
{
    int frames = lua_toboolean(L, 1);
    int channel = lua_isnoneornil(L, 2) || lua_toboolean(L, 2);
    int rc = init_library(JF_CONFIG_IGNORE_ENV | (channel ? JF_CONFIG_CONTROL : 0), 0);
    if (rc != 0) {
        if (rc == JF_ESINK) /* initialised, without the channel */
            jf_shutdown();
        lua_pushnil(L);
        lua_pushfstring(L, "jitframes: %s%s", channel ? "no control channel: " : "", jf_last_error());
        return 2;
    }
    library_users++;
    describe_frames = frames;
    lua_pushboolean(L, 1);
    return 1;
}

static int l_shutdown(lua_State *L)
{
    (void)L;
    if (library_users > 0 && jf_shutdown() == 0)
        library_users--;
    return 0;
}

static int l_enabled_sinks(lua_State *L)
{
    unsigned bits = jf_enabled_sinks();
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 0, n = 0; i < JF_SINK_COUNT; i++) {
        if (!(bits & (1u << i)))
            continue;
        if (n++)
            luaL_addchar(&b, ',');
        luaL_addstring(&b, jf_sink_name(1u << i));
    }
    luaL_pushresult(&b);
    return 1;
}

/* The event handling, in Lua: jit.attach only calls Lua functions. `c` is
 * the table of the C functions above. */
static const char glue[] =
    "local c = ...\n"
    "local jit, util = require('jit'), require('jit.util')\n"
    "-- quiet: the standby the module starts by itself when nothing was asked for\n"
    "-- (published in memory only): not 'active' to the program, and start() or\n"
    "-- standby() build on it instead of refusing.\n"
    "local M, state = {}, {active = false, quiet = false, starts = {}, live = {}, spadjust = {}, errors = "
    "0,\n"
    "                     last_error = nil, registered = 0, compile_seconds = 0, register_seconds = 0}\n"
    "local clock = os.clock\n"
    "local function chunk_and_line(func, pc)\n"
    "  local info = util.funcinfo(func, pc)\n"
    "  local src = info and info.source or ''\n"
    "  local first = src:sub(1, 1)\n"
    "  local name = (first == '@' or first == '=') and src:sub(2) or '(string)'\n"
    "  return name, info and info.currentline or 0\n"
    "end\n"
    "local function failed(msg)\n"
    "  state.errors = state.errors + 1\n"
    "  if not state.last_error then io.stderr:write('jitframes: ', msg, '\\n') end\n"
    "  state.last_error = msg\n"
    "end\n"
    "-- jit.attach keeps one handler per event: find the one ours displaces (jit.v,\n"
    "-- jit.dump...) in LuaJIT's registry table, to call it on and put it back.\n"
    "local raw_attach = jit.attach\n"
    "local function attach(handler)\n"
    "  local ok, reg = pcall(debug.getregistry)\n"
    "  local events = ok and type(reg) == 'table' and reg._VMEVENTS\n"
    "  local before = {}\n"
    "  if type(events) == 'table' then for k, v in pairs(events) do before[k] = v end end\n"
    "  raw_attach(handler, 'trace')\n"
    "  events = ok and type(reg) == 'table' and reg._VMEVENTS\n"
    "  if type(events) == 'table' then\n"
    "    for k, v in pairs(events) do if v == handler then return before[k] end end\n"
    "  end\n"
    "end\n"
    "local function detach(handler, previous)\n"
    "  raw_attach(handler)\n"
    "  if previous then raw_attach(previous, 'trace') end\n"
    "end\n"
    "-- The parent argument of _register: nil for a root or stitched trace.\n"
    "local function parent_of(start)\n"
    "  local otr, oex = start[4], start[5]\n"
    "  if not otr or oex == -1 then return nil end\n"
    "  local p = state.spadjust[otr]\n"
    "  if p == nil then return false end\n"
    "  return p\n"
    "end\n"
    "local function on_trace(what, tr, func, pc, otr, oex)\n"
    "  if what == 'start' then\n"
    "    local name, line = chunk_and_line(func, pc)\n"
    "    state.starts[tr] = {name, line, clock(), otr, oex}\n"
    "  elseif what == 'stop' then\n"
    "    local start = state.starts[tr]\n"
    "    state.starts[tr] = nil\n"
    "    local mcode, addr = util.tracemc(tr)\n"
    "    if not start or not mcode or #mcode == 0 then return end\n"
    "    local t0 = clock()\n"
    "    local rc, msg, spadjust = c._register(addr, #mcode, string.format('TRACE_%d::%s:%d', tr, start[1], "
    "start[2]),\n"
    "                                          start[1], start[2], parent_of(start))\n"
    "    local t1 = clock()\n"
    "    state.compile_seconds = state.compile_seconds + (t0 - start[3])\n"
    "    state.register_seconds = state.register_seconds + (t1 - t0)\n"
    "    state.spadjust[tr] = spadjust\n"
    "    if rc == 0 then state.live[tr] = addr; state.registered = state.registered + 1 else failed(msg) "
    "end\n"
    "  elseif what == 'abort' then\n"
    "    state.starts[tr] = nil\n"
    "  elseif what == 'flush' then\n"
    "    for t, addr in pairs(state.live) do c._unregister(addr) end\n"
    "    state.live, state.starts, state.spadjust = {}, {}, {}\n"
    "  end\n"
    "end\n"
    "local function handler(...)\n"
    "  local ok, err = pcall(on_trace, ...)\n"
    "  if not ok then failed(tostring(err)) end\n"
    "  if state.previous then return state.previous(...) end\n"
    "end\n"
    "-- A trace handler attached after ours (-jv, -jdump after -l jitframes) would\n"
    "-- take its slot: while ours is attached, jit.attach keeps such a handler as the\n"
    "-- one ours calls on, and detaching it (jit.attach(f)) forgets it, as the slot would.\n"
    "jit.attach = function(fn, event)\n"
    "  if state.active and fn ~= handler then\n"
    "    if event == 'trace' then state.previous = fn; return end\n"
    "    if event == nil and fn == state.previous then state.previous = nil end\n"
    "  end\n"
    "  return raw_attach(fn, event)\n"
    "end\n"
    "-- Check on this VM, once, that traces' frames are where trace_frame.c says.\n"
    "local function check_frames()\n"
    "  if (jit.arch ~= 'x64' and jit.arch ~= 'arm64') or jit.os == 'Windows' or jit.version_num ~= 20100 "
    "then\n"
    "    return false, 'unwinding through traces is known for LuaJIT 2.1 on x64 and arm64 only, not ' ..\n"
    "                  jit.version .. ' (' .. jit.version_num .. ') on ' .. jit.arch .. '/' .. jit.os\n"
    "  end\n"
    "  if not jit.status() then return false, 'the JIT compiler is off' end\n"
    "  local okf, ffi = pcall(require, 'ffi')\n"
    "  if not okf then return false, 'no FFI to run the layout probe' end\n"
    "  local hit = ffi.cast('void (*)(void)', c._probe_target())\n"
    "  local traces = {}\n"
    "  local function on_stop(what, tr) if what == 'stop' then traces[#traces + 1] = tr end end\n"
    "  local previous = attach(on_stop)\n"
    "  local err = c._probe_run(function() for _ = 1, 500 do hit() end end)\n"
    "  detach(on_stop, previous)\n"
    "  if err then return false, 'the layout probe failed: ' .. tostring(err) end\n"
    "  local ra = c._probe_return_address()\n"
    "  for _, tr in ipairs(traces) do\n"
    "    local mcode, addr = util.tracemc(tr)\n"
    "    if mcode and ra and ra >= addr and ra < addr + #mcode then return c._probe_check(addr, #mcode) end\n"
    "  end\n"
    "  return false, 'no compiled trace called the layout probe (JIT compiler limited by jit.opt?)'\n"
    "end\n"
    "function M.start(opts)\n"
    "  if state.active and not state.quiet then return nil, 'jitframes: already started' end\n"
    "  local sinks = tostring(type(opts) == 'table' and opts.sinks or opts or 'perfmap')\n"
    "  if state.frames == nil and c._needs_frames(sinks) then\n"
    "    local ok, why = check_frames()\n"
    "    state.frames, state.frames_error = ok == true, why\n"
    "  end\n"
    "  local ok, msg = c._init(sinks, state.frames, state.frames_error)\n"
    "  if not ok then return nil, msg end\n"
    "  if msg then io.stderr:write(msg, '\\n') end\n"
    "  if not state.quiet then state.previous = attach(handler) end\n"
    "  state.active, state.quiet = true, false\n"
    "  return true\n"
    "end\n"
    "function M.standby(opts)\n"
    "  if state.active and not state.quiet then return nil, 'jitframes: already started' end\n"
    "  if state.frames == nil then\n"
    "    local ok, why = check_frames()\n"
    "    state.frames, state.frames_error = ok == true, why\n"
    "  end\n"
    "  local ok, msg = c._standby(state.frames, not (type(opts) == 'table' and opts.channel == false))\n"
    "  if not ok then return nil, msg end\n"
    "  if not state.quiet then state.previous = attach(handler) end\n"
    "  state.active, state.quiet = true, false\n"
    "  return true\n"
    "end\n"
    "function M.stop()\n"
    "  if not state.active or state.quiet then return nil, 'jitframes: not started' end\n"
    "  detach(handler, state.previous)\n"
    "  state.active, state.previous = false, nil\n"
    "  return true\n"
    "end\n"
    "function M.active() return state.active and not state.quiet end\n"
    "function M.sinks() return M.active() and c._enabled_sinks() or '' end\n"
    "function M.status()\n"
    "  local n = 0\n"
    "  for _ in pairs(state.live) do n = n + 1 end\n"
    "  return {active = M.active(), traces = n, errors = state.errors, last_error = state.last_error,\n"
    "          registered = state.registered, compile_seconds = state.compile_seconds,\n"
    "          register_seconds = state.register_seconds, frames = state.frames == true,\n"
    "          frames_error = state.frames_error}\n"
    "end\n"
    "local env = os.getenv('JITFRAMES')\n"
    "local control = os.getenv('JITFRAMES_CONTROL')\n"
    "if env and env ~= '' then\n"
    "  local ok, msg = M.start(env)\n"
    "  if not ok then io.stderr:write(msg, ' (JITFRAMES=', env, '); running without\\n') end\n"
    "end\n"
    "if control and control ~= '' and control ~= '0' then\n"
    "  local ok, msg\n"
    "  if state.active then ok, msg = c._standby(state.frames) else ok, msg = M.standby() end\n"
    "  if not ok then io.stderr:write(msg, ' (JITFRAMES_CONTROL=', control, '); running without\\n') end\n"
    "end\n"
    "-- Nothing asked for: quiet standby, the traces published in memory for\n"
    "-- `jitframes record PID` (silent if that cannot be). No layout probe here:\n"
    "-- loading the module compiles nothing of its own (start() probes if it must).\n"
    "if not state.active and c._standby(false, false) then\n"
    "  state.previous = attach(handler)\n"
    "  state.active, state.quiet = true, true\n"
    "end\n"
    "return M\n";

__attribute__((visibility("default"))) int luaopen_jitframes(lua_State *L);

int luaopen_jitframes(lua_State *L)
{
    static const luaL_Reg functions[] = {
        {"_register", l_register},
        {"_unregister", l_unregister},
        {"_init", l_init},
        {"_standby", l_standby},
        {"_shutdown", l_shutdown},
        {"_enabled_sinks", l_enabled_sinks},
        {"_needs_frames", l_needs_frames},
        {"_probe_run", l_probe_run},
        {"_probe_target", l_probe_target},
        {"_probe_return_address", l_probe_return_address},
        {"_probe_check", l_probe_check},
        {NULL, NULL},
    };
    if (luaL_loadbuffer(L, glue, sizeof glue - 1, "=jitframes") != 0)
        return lua_error(L); /* at load time only: a bug here, not in the host */
    lua_newtable(L);
    luaL_register(L, NULL, functions);
    lua_call(L, 1, 1);
    return 1;
}
