-- Compiles arg[1] functions (chunks named k<i>) to traces and writes to
-- arg[2] how many traces the jitframes module registered.
local jf = require("jitframes")
for i = 1, tonumber(arg[1]) do
  local f = load("local s = 0 for j = 1, 200 do s = s + j * " .. i .. " end return s", "=k" .. i)
  for _ = 1, 60 do f() end
end
local out = io.open(arg[2], "w")
out:write(jf.status().registered, "\n")
out:close()
