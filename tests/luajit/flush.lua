-- Two functions whose traces use the same machine code addresses: A runs,
-- jit.flush() frees every trace (and LuaJIT reuses its mcode area), B runs.
local function spin_a(n) local s = 0 for i = 1, n do s = (s + i * 7) % 1000003 end return s end
local function spin_b(n) local s = 0 for i = 1, n do s = (s * 3 + i) % 1000003 end return s end
local rounds = tonumber(arg and arg[1] or 20)
local t = 0
for _ = 1, rounds do t = t + spin_a(2000000) end
jit.flush()
for _ = 1, rounds do t = t + spin_b(2000000) end
print(t)
