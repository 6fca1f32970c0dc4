-- The LuaJIT module's API and contracts, on the luajit running it.
local jf = require("jitframes")
local function check(cond, what) if not cond then error("FAIL: " .. what, 2) end print("ok: " .. what) end
local function pid() return io.open("/proc/self/stat"):read("*n") end
local function map() local f = io.open("/tmp/perf-" .. pid() .. ".map") if not f then return "" end local s = f:read("*a") f:close() return s end

check(not jf.active() and jf.sinks() == "", "inactive at first")
local ok, err = jf.start("bogus")
check(ok == nil and err:match("invalid sinks 'bogus'"), "an unknown sink is refused with a message")
check(jf.start{sinks = "perfmap"} == true and jf.active() and jf.sinks() == "perfmap", "start with a table")
local ok2, err2 = jf.start("perfmap")
check(ok2 == nil and err2:match("already started"), "a second start is refused")

-- Functions made with load(): many small traces, each named by its chunk and line.
for i = 1, 30 do
  local f = load("local s = 0 for j = 1, 200 do s = s + j * " .. i .. " end return s", "=gen" .. i)
  for _ = 1, 60 do f() end
end
local m = map()
local n = 0
for _ in m:gmatch("TRACE_%d+::gen%d+:1\n") do n = n + 1 end
check(n >= 30, "30 load()ed functions give " .. n .. " named traces (TRACE_<n>::gen<i>:1)")
for line in m:gmatch("[^\n]+") do
  check(line:match("^%x+ %x+ TRACE_%d+::[^ ]") ~= nil, "strict map line: " .. line)
  break
end

-- A trace handler attached after start runs alongside; detaching it (as
-- jit.v.off() does) stops it, not the module.
local function traces_of(name) for _ = 1, 60 do load("local s = 0 for j = 1, 200 do s = s + j end return s", "=" .. name)() end end
local seen = 0
local function other(what) if what == "stop" then seen = seen + 1 end end
jit.attach(other, "trace")
local before = jf.status().registered
traces_of("with_other")
check(seen >= 1 and jf.status().registered > before, "a handler attached after start and the module both see traces")
jit.attach(other)
local seen_then, registered_then = seen, jf.status().registered
traces_of("other_detached")
check(seen == seen_then and jf.status().registered > registered_then, "the detached handler sees no more traces, the module does")

-- flush: every trace is unregistered; later traces at reused addresses are new entries.
jit.flush()
check(jf.status().traces == 0, "flush unregisters every trace")
for _ = 1, 100 do local s = 0 for j = 1, 500 do s = s + j end end
check(jf.status().traces >= 1, "traces after a flush are registered again")

check(jf.stop() == true and not jf.active(), "stop")
local ok3, err3 = jf.stop()
check(ok3 == nil and err3:match("not started"), "a second stop is refused")
check(jf.status().errors == 0, "no registration failed")

-- A LuaJIT whose trace frames the module does not know: gdb and unwind are
-- refused with the reason, the other sinks stay on.
local real_version = jit.version_num
jit.version_num = 30000
local ok4, err4 = jf.start("gdb")
check(ok4 == nil and err4:match("refused") and err4:match("known for LuaJIT 2.1 on x64 and arm64"),
      "gdb alone on an unknown LuaJIT is refused: " .. tostring(err4))
check(jf.start("perfmap,gdb,unwind") == true and jf.sinks() == "perfmap",
      "perfmap stays on when gdb and unwind are refused")
check(jf.status().frames == false and jf.status().frames_error:match("not LuaJIT"), "status says why")
check(jf.stop() == true, "stop")
jit.version_num = real_version
os.remove("/tmp/perf-" .. pid() .. ".map")
print("PASS")
