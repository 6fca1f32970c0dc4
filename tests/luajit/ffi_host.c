/*
 * A host program embedding LuaJIT, for the debugger tests: it runs a Lua
 * script whose compiled traces call the C functions below through the FFI
 * (ffi.C finds them: the program is linked with --export-dynamic). Unlike
 * Debian's stripped luajit executable, every C frame from here to main has
 * a name, so a backtrace through a trace can be checked to have no `??`.
 *     ffi_host SCRIPT [ARGS...]
 */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include <stdio.h>

#define EXPORTED __attribute__((visibility("default"), noinline))

static volatile int calls;

EXPORTED int jf_lua_leaf_root(int i);
EXPORTED int jf_lua_leaf_side(int i);
EXPORTED void jf_lua_ready(const char *traces);
EXPORTED void jf_lua_marked(int i);

/* Set by a script: the call of jf_lua_leaf_root(i) with i == jf_lua_mark
 * (then 0 again) calls jf_lua_marked, where a debugger stops. */
__attribute__((visibility("default"))) volatile int jf_lua_mark;

/* Called from the root trace of the script's loop. */
EXPORTED int jf_lua_leaf_root(int i)
{
    calls++;
    if (jf_lua_mark != 0 && jf_lua_mark == i) {
        jf_lua_mark = 0;
        jf_lua_marked(i);
    }
    return i & 1;
}

/* The marked call (see jf_lua_mark). */
EXPORTED void jf_lua_marked(int i)
{
    calls += i;
}

/* Called from a side trace of it. */
EXPORTED int jf_lua_leaf_side(int i)
{
    calls++;
    return i & 3;
}

/* Called once the traces exist, with their list (the debugger reads it). */
EXPORTED void jf_lua_ready(const char *traces)
{
    (void)traces;
    calls++;
}

static int run_script(lua_State *L, const char *path)
{
    if (luaL_loadfile(L, path) != 0 || lua_pcall(L, 0, 0, 0) != 0) {
        fprintf(stderr, "ffi_host: %s\n", lua_tostring(L, -1));
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: ffi_host SCRIPT\n");
        return 2;
    }
    lua_State *L = luaL_newstate();
    if (!L)
        return 1;
    luaL_openlibs(L);
    int rc = run_script(L, argv[1]);
    lua_close(L);
    return rc;
}
