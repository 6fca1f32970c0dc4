-- The LuaJIT client as a rock, built from the release tarball (source.url:
-- GitHub's archive of tag v0.2.0, made as `scripts/release-tarball v0.2.0`
-- makes it). From a checkout, with luarocks set up for LuaJIT:
--   luarocks --lua-version 5.1 --tree TREE make bindings/luajit/jitframes-0.2.0-1.rockspec \
--     LUA_INCDIR=/usr/include/luajit-2.1
-- builds it with the project's CMake (the library compiled into the module;
-- nothing else built) and installs only the module, TREE/lib/lua/5.1/jitframes.so,
-- which `luajit -l jitframes` finds with `eval $(luarocks --tree TREE path)`.
-- The compiler gets luarocks' $(CFLAGS), the link its $(LIBFLAG), the headers
-- come from $(LUA_INCDIR): LuaJIT's, which a luarocks configured for LuaJIT
-- sets itself (a luarocks for PUC Lua 5.1 points at lua5.1's, where
-- luajit.h is missing: the build stops there, before compiling anything).
-- The module is for LuaJIT 2.1 (Debian's luajit, OpenResty's luajit2).
-- `luarocks test` runs the module's API test on the module just built
-- (build.luarocks), with $LUAJIT (default: luajit).
rockspec_format = "3.0"
package = "jitframes"
version = "0.2.0-1"
source = {
   url = "https://github.com/jitframes/jitframes/archive/v0.2.0.tar.gz",
   dir = "jitframes-0.2.0",
}
description = {
   summary = "Compiled LuaJIT traces named for perf, gdb and lldb",
   detailed = [[
Every trace LuaJIT compiles gets a name (TRACE_<n>::<chunk>:<line>) in the
perf map and jitdump, and is described to gdb and lldb through the GDB JIT
interface, so native profilers and debuggers see Lua code.]],
   homepage = "https://github.com/jitframes/jitframes",
   issues_url = "https://github.com/jitframes/jitframes/issues",
   license = "MIT",
   labels = { "luajit", "profiling", "perf", "gdb", "jit" },
}
dependencies = {
   "lua == 5.1",
}
-- LuaJIT's headers, looked for in $(LUA_INCDIR) before anything is built.
external_dependencies = {
   LUA = { header = "luajit.h" },
}
build = {
   type = "cmake",
   variables = {
      CMAKE_BUILD_TYPE = "Release",
      CMAKE_C_FLAGS = "$(CFLAGS)",
      CMAKE_MODULE_LINKER_FLAGS = "$(LIBFLAG)",
      JITFRAMES_LUA_INCDIR = "$(LUA_INCDIR)",
      JITFRAMES_BUILD_TOOLS = "OFF",
      JITFRAMES_BUILD_EXAMPLES = "OFF",
      JITFRAMES_BUILD_TESTS = "OFF",
      JITFRAMES_BUILD_BENCH = "OFF",
      JITFRAMES_BUILD_PYTHON = "OFF",
      JITFRAMES_WERROR = "OFF",
   },
   -- The module only: CMake's install would add the C library, headers and
   -- man pages, which belong to the Debian packages, not to a rock.
   install_pass = false,
   install = {
      lib = { jitframes = "build.luarocks/bindings/luajit/jitframes.so" },
   },
}
test = {
   type = "command",
   command = [[LUA_CPATH="build.luarocks/bindings/luajit/?.so" "${LUAJIT:-luajit}" tests/luajit/test_api.lua]],
}
