-- A hot loop with a side exit (a side trace) and a called function.
local function inner(x) return (x * 3 + 1) % 1000003 end
local function work(n)
  local acc = 0
  for i = 1, n do
    acc = inner(acc + i)
    if i % 3 == 0 then acc = acc + 1 end
  end
  return acc
end
local t = 0
for r = 1, tonumber(arg and arg[1] or 40) do t = t + work(2000000) end
print(t)
