-- Many small functions (made with load), each compiled to its own traces,
-- run in turns: samples spread over hundreds of traces.
local fns = {}
for i = 1, 300 do
  fns[i] = load("local x = ... local s = 0 for j = 1, 2000 do s = (s + j * " .. i ..
                ") % 1000003 end return (s + x) % 1000003", "=many.lua")
end
local t = 0
for _ = 1, tonumber(arg and arg[1] or 30) * 5 do
  for i = 1, #fns do t = fns[i](t) end
end
print(t)
