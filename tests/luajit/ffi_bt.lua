-- Run by ffi_host under a debugger: a loop whose root trace calls
-- jf_lua_leaf_root and whose side trace calls jf_lua_leaf_side, both through
-- the FFI. SINKS (environment) selects the jitframes sinks; "none" runs
-- without the module (the negative control).
local sinks = os.getenv('SINKS') or 'gdb'
local ffi = require('ffi')
ffi.cdef [[
int jf_lua_leaf_root(int);
int jf_lua_leaf_side(int);
void jf_lua_ready(const char *);
]]
local C = ffi.C
-- Parents of side traces, from the trace events (attached before jitframes,
-- which passes the events on).
local parents = {}
jit.attach(function(what, tr, func, pc, otr, oex)
  if what == 'start' then parents[tr] = (otr and oex ~= -1) and otr or 0 end
end, 'trace')
if sinks ~= 'none' then
  local jf = require('jitframes')
  assert(jf.start(sinks))
  local st = jf.status()
  assert(st.frames, 'trace frames not described: ' .. tostring(st.frames_error))
end

local function work(n)
  local s = 0.5
  for i = 1, n do
    if i % 4 == 0 then
      s = s + C.jf_lua_leaf_side(i) * 0.5
    else
      s = s + C.jf_lua_leaf_root(i)
    end
  end
  return s
end

for _ = 1, 20 do work(1000) end
local list = {}
for tr = 1, 100 do
  local mcode, addr = require('jit.util').tracemc(tr)
  if mcode then list[#list + 1] = string.format('%d %x %d %d', tr, addr, #mcode, parents[tr] or 0) end
end
C.jf_lua_ready(table.concat(list, '\n'))
for _ = 1, 3 do work(1000) end
