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
 */
#include <jitframes.h>
#include <lauxlib.h>
#include <lua.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Initialisations of the library made by lua_States (each start balances one). */
static int library_users;

static const char *const sink_words = "perfmap, jitdump, gdb, unwind, all";

/* _register(addr, size, name, file, line) -> 0 or a JF_E* code, message */
static int l_register(lua_State *L)
{
    jf_region r = JF_REGION_INIT;
    lua_Number addr = luaL_checknumber(L, 1);
    r.addr = (const void *)(uintptr_t)addr;
    r.size = (size_t)luaL_checknumber(L, 2);
    r.name = luaL_checkstring(L, 3);
    r.file = luaL_optstring(L, 4, NULL);
    r.line = (uint32_t)luaL_optnumber(L, 5, 0);
    int rc = jf_register(&r);
    if (rc == JF_EEXIST && jf_unregister(r.addr) == 0) /* a stale trace at a reused address */
        rc = jf_register(&r);
    lua_pushinteger(L, rc);
    lua_pushstring(L, rc ? jf_last_error() : "");
    return 2;
}

/* _unregister(addr) -> 0 or a JF_E* code */
static int l_unregister(lua_State *L)
{
    lua_pushinteger(L, jf_unregister((const void *)(uintptr_t)luaL_checknumber(L, 1)));
    return 1;
}

/* _init(sinks) -> true, or nil and a message */
static int l_init(lua_State *L)
{
    const char *list = luaL_checkstring(L, 1);
    unsigned sinks;
    if (jf_parse_sinks(list, &sinks) != 0 || sinks == 0) {
        lua_pushnil(L);
        lua_pushfstring(L, "jitframes: invalid sinks '%s' (use %s)", list, sink_words);
        return 2;
    }
    jf_config cfg = JF_CONFIG_INIT;
    cfg.flags = JF_CONFIG_IGNORE_ENV;
    cfg.sinks = sinks;
    const char *dir = getenv("JITFRAMES_DIR");
    cfg.dump_dir = dir && *dir ? dir : NULL;
    int rc = jf_init(&cfg);
    if (rc != 0 && rc != JF_ESINK) {
        lua_pushnil(L);
        lua_pushfstring(L, "jitframes: %s", jf_last_error());
        return 2;
    }
    library_users++;
    lua_pushboolean(L, 1);
    if (rc == JF_ESINK) { /* running, without the sink that failed */
        lua_pushfstring(L, "jitframes: %s", jf_last_error());
        return 2;
    }
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
    static const char *const words[] = {"perfmap", "jitdump", "gdb", "unwind"};
    unsigned bits = jf_enabled_sinks();
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 0, n = 0; i < 4; i++) {
        if (!(bits & (1u << i)))
            continue;
        if (n++)
            luaL_addchar(&b, ',');
        luaL_addstring(&b, words[i]);
    }
    luaL_pushresult(&b);
    return 1;
}

/* The event handling, in Lua: jit.attach only calls Lua functions. `c` is
 * the table of the C functions above. */
static const char glue[] =
    "local c = ...\n"
    "local jit, util = require('jit'), require('jit.util')\n"
    "local M, state = {}, {active = false, starts = {}, live = {}, errors = 0, last_error = nil,\n"
    "                     registered = 0, compile_seconds = 0, register_seconds = 0}\n"
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
    "local function on_trace(what, tr, func, pc)\n"
    "  if what == 'start' then\n"
    "    local name, line = chunk_and_line(func, pc)\n"
    "    state.starts[tr] = {name, line, clock()}\n"
    "  elseif what == 'stop' then\n"
    "    local start = state.starts[tr]\n"
    "    state.starts[tr] = nil\n"
    "    local mcode, addr = util.tracemc(tr)\n"
    "    if not start or not mcode or #mcode == 0 then return end\n"
    "    local t0 = clock()\n"
    "    local rc, msg = c._register(addr, #mcode, string.format('TRACE_%d::%s:%d', tr, start[1], start[2]),\n"
    "                                start[1], start[2])\n"
    "    local t1 = clock()\n"
    "    state.compile_seconds = state.compile_seconds + (t0 - start[3])\n"
    "    state.register_seconds = state.register_seconds + (t1 - t0)\n"
    "    if rc == 0 then state.live[tr] = addr; state.registered = state.registered + 1 else failed(msg) end\n"
    "  elseif what == 'abort' then\n"
    "    state.starts[tr] = nil\n"
    "  elseif what == 'flush' then\n"
    "    for t, addr in pairs(state.live) do c._unregister(addr) end\n"
    "    state.live, state.starts = {}, {}\n"
    "  end\n"
    "end\n"
    "local function handler(...)\n"
    "  local ok, err = pcall(on_trace, ...)\n"
    "  if not ok then failed(tostring(err)) end\n"
    "end\n"
    "function M.start(opts)\n"
    "  if state.active then return nil, 'jitframes: already started' end\n"
    "  local sinks = type(opts) == 'table' and opts.sinks or opts or 'perfmap'\n"
    "  local ok, msg = c._init(tostring(sinks))\n"
    "  if not ok then return nil, msg end\n"
    "  if msg then io.stderr:write(msg, '\\n') end\n"
    "  jit.attach(handler, 'trace')\n"
    "  state.active = true\n"
    "  return true\n"
    "end\n"
    "function M.stop()\n"
    "  if not state.active then return nil, 'jitframes: not started' end\n"
    "  jit.attach(handler)\n"
    "  state.active = false\n"
    "  return true\n"
    "end\n"
    "function M.active() return state.active end\n"
    "function M.sinks() return state.active and c._enabled_sinks() or '' end\n"
    "function M.status()\n"
    "  local n = 0\n"
    "  for _ in pairs(state.live) do n = n + 1 end\n"
    "  return {active = state.active, traces = n, errors = state.errors, last_error = state.last_error,\n"
    "          registered = state.registered, compile_seconds = state.compile_seconds,\n"
    "          register_seconds = state.register_seconds}\n"
    "end\n"
    "local env = os.getenv('JITFRAMES')\n"
    "if env and env ~= '' then\n"
    "  local ok, msg = M.start(env)\n"
    "  if not ok then io.stderr:write(msg, ' (JITFRAMES=', env, '); running without\\n') end\n"
    "end\n"
    "return M\n";

__attribute__((visibility("default"))) int luaopen_jitframes(lua_State *L);

int luaopen_jitframes(lua_State *L)
{
    static const luaL_Reg functions[] = {
        {"_register", l_register},   {"_unregister", l_unregister},
        {"_init", l_init},           {"_shutdown", l_shutdown},
        {"_enabled_sinks", l_enabled_sinks}, {NULL, NULL},
    };
    if (luaL_loadbuffer(L, glue, sizeof glue - 1, "=jitframes") != 0)
        return lua_error(L); /* at load time only: a bug here, not in the host */
    lua_newtable(L);
    luaL_register(L, NULL, functions);
    lua_call(L, 1, 1);
    return 1;
}
