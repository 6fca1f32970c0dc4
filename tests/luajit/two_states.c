/*
 * Two LuaJIT VMs (lua_States from luaL_newstate) in one process, each
 * starting the jitframes module: both VMs' traces land in the one perf map
 * of the process, named by their own chunks; stopping one leaves the other
 * running. Prints the pid; the test script checks the map.
 */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include <stdio.h>
#include <unistd.h>

static const char program[] = "local jf = require('jitframes')\n"
                              "assert(jf.start('perfmap'))\n"
                              "local s = 0 for i = 1, 3000000 do s = (s + i) % 1000003 end\n"
                              "return jf.status().registered\n";

static lua_State *vm(const char *chunkname)
{
    lua_State *L = luaL_newstate();
    if (!L)
        return NULL;
    luaL_openlibs(L);
    if (luaL_loadbuffer(L, program, sizeof program - 1, chunkname) != 0 || lua_pcall(L, 0, 1, 0) != 0) {
        fprintf(stderr, "%s: %s\n", chunkname, lua_tostring(L, -1));
        lua_close(L);
        return NULL;
    }
    printf("%s registered %d traces\n", chunkname, (int)lua_tointeger(L, -1));
    lua_pop(L, 1);
    return L;
}

int main(void)
{
    lua_State *a = vm("=vm_a");
    lua_State *b = vm("=vm_b");
    if (!a || !b)
        return 1;
    /* Stopping A leaves B registering. */
    if (luaL_dostring(a, "assert(require('jitframes').stop())") != 0 ||
        luaL_dostring(b, "local s = 0 for i = 1, 3000000 do s = (s * 3 + i) % 1000003 end "
                         "assert(require('jitframes').active())") != 0) {
        fprintf(stderr, "%s\n", lua_tostring(a, -1) ? lua_tostring(a, -1) : lua_tostring(b, -1));
        return 1;
    }
    printf("pid=%ld\n", (long)getpid());
    lua_close(a);
    lua_close(b);
    return 0;
}
