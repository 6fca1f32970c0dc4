-- Run by ffi_host under a debugger: TRACES functions, each a loop calling
-- jf_lua_leaf_root through the FFI, compiled into one root trace each
-- (registered one by one: symfiles merged), all flushed (unregistered),
-- compiled again into the freed mcode area; then the first, middle and last
-- functions run once more with jf_lua_mark set, so that each stops the
-- debugger in jf_lua_marked under its trace. Function k is defined on line
-- k of the chunk "many_traces_gen.lua". SINKS selects the jitframes sinks
-- ("none": without the module, the negative control).
local sinks = os.getenv('SINKS') or 'gdb'
local n = tonumber(os.getenv('TRACES') or '500')
local ffi = require('ffi')
ffi.cdef [[
int jf_lua_leaf_root(int);
int jf_lua_mark;
]]
local C = ffi.C
if sinks ~= 'none' then
  local jf = require('jitframes')
  assert(jf.start(sinks))
end
local src = {}
for k = 1, n do
  src[k] = string.format(
    'F[%d] = function(m) local s = 0 for i = 1, m do s = s + C.jf_lua_leaf_root(i + %d) end return s end',
    k, k)
end
local F = {}
assert(load('local C, F = ...; ' .. table.concat(src, '\n'), '@many_traces_gen.lua'))(C, F)
for k = 1, n do F[k](100) end
jit.flush()
for k = 1, n do F[k](100) end
for _, k in ipairs({1, math.floor(n / 2), n}) do
  C.jf_lua_mark = 50 + k
  F[k](100)
end
