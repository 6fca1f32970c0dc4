-- The LuaJIT client as a rock. From the repository's root:
--   luarocks --lua-version 5.1 --tree TREE make bindings/luajit/jitframes-0.1.0-1.rockspec
-- builds it with the project's CMake (the library compiled into the module;
-- nothing else built) and installs only the module, TREE/lib/lua/5.1/jitframes.so,
-- which `luajit -l jitframes` finds with `eval $(luarocks --tree TREE path)`.
-- The module is for LuaJIT 2.1 (Debian's luajit, OpenResty's luajit2); the
-- rock only needs LuaJIT's headers at build time (pkg-config luajit).
rockspec_format = "3.0"
package = "jitframes"
version = "0.1.0-1"
source = {
   -- `luarocks make` builds the checkout it runs in; nothing is fetched.
   url = "git+file://.",
}
description = {
   summary = "Compiled LuaJIT traces named for perf, gdb and lldb",
   detailed = [[
Every trace LuaJIT compiles gets a name (TRACE_<n>::<chunk>:<line>) in the
perf map and jitdump, and is described to gdb and lldb through the GDB JIT
interface, so native profilers and debuggers see Lua code.]],
   license = "MIT",
}
dependencies = {
   "lua == 5.1",
}
build = {
   type = "cmake",
   variables = {
      CMAKE_BUILD_TYPE = "RelWithDebInfo",
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
