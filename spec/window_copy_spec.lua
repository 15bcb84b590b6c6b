-- Copies whose inner dim is a few elements (windows of overlapping views,
-- narrow permutations), against copies built element by element; and
-- reductions over a window's two small dims against Lua loops.
local nd = require "nd"

local DTYPES = { "float32", "float64", "int32", "int64", "uint8", "bool" }
local FLOAT = { float32 = true, float64 = true }

local function filled(dt, h, w, seed)
  local g = nd.generator(seed or 1)
  local t = g:randint(0, 200, { h, w })
  if dt == "bool" then return t:gt(100) end
  if FLOAT[dt] then return t:to(dt):div(7) end
  return t:to(dt)
end

-- The windows of p (size x size, step apart) by index: element (i, j, a, b)
-- of p:unfold(1, size, step):unfold(2, size, step) is p[(i-1)*step + a][(j-1)*step + b].
local function check_windows(p, win, size, step, what)
  local oh, ow = win:size(1), win:size(2)
  for i = 1, oh do
    for j = 1, ow do
      for a = 1, size do
        for b = 1, size do
          local want = p:get((i - 1) * step + a, (j - 1) * step + b)
          local got = win:get(i, j, a, b)
          if got ~= want then
            error(("%s: (%d, %d, %d, %d): expected %s, got %s"):format(what, i, j, a, b,
              tostring(want), tostring(got)), 2)
          end
        end
      end
    end
  end
end

describe("copies of window views", function()
  for _, dt in ipairs(DTYPES) do
    it(dt .. ": im2col copies (reshape, contiguous, clone, copy_ into permuted)", function()
      for _, size in ipairs({ 1, 2, 3, 5 }) do
        for _, step in ipairs({ 1, 2 }) do
          for _, w in ipairs({ 9, 41 }) do -- rows shorter and longer than a tile row
            local p = filled(dt, 13, w, size * 10 + step)
            local v = p:unfold(1, size, step):unfold(2, size, step)
            local oh, ow = v:size(1), v:size(2)
            local what = ("%s size %d step %d width %d"):format(dt, size, step, w)
            local r = v:reshape(oh * ow, size * size)
            assert.is_true(r:is_contiguous(), what)
            check_windows(p, r:view(oh, ow, size, size), size, step, what .. " reshape")
            check_windows(p, v:contiguous(), size, step, what .. " contiguous")
            check_windows(p, v:clone(), size, step, what .. " clone")
            local d = nd.empty(size, size, oh, ow, dt):permute(3, 4, 1, 2)
            d:copy_(v)
            check_windows(p, d, size, step, what .. " copy_ into permuted")
            local f = p:flip(2)
            check_windows(f:contiguous(), f:unfold(1, size, step):unfold(2, size, step):contiguous(),
              size, step, what .. " flipped")
          end
        end
      end
    end)
  end

  it("narrow inner dims of permuted copies, every element size", function()
    for _, dt in ipairs(DTYPES) do
      for _, n in ipairs({ 5, 1000 }) do
        for _, k in ipairs({ 2, 3, 8 }) do
          local a = filled(dt, k, n, n + k)
          local c = a:t():contiguous() -- {n, k}: an inner dim of k, rows of n
          for i = 1, n do
            for j = 1, k do
              assert.equals(a:get(j, i), c:get(i, j))
            end
          end
          local src = filled(dt, 2, n * k, k):view(2, n, k)
          local b = src:permute(1, 3, 2):contiguous() -- {2, k, n}
          for i = 1, n, math.max(1, math.floor(n / 7)) do
            for j = 1, k do assert.equals(src:get(2, i, j), b:get(2, j, i)) end
          end
          -- a broadcast source row, a tiny inner dim
          local row = filled(dt, 1, k, 3)
          local e = nd.empty(n, k, dt)
          e:copy_(row)
          for i = 1, n, math.max(1, math.floor(n / 5)) do
            for j = 1, k do assert.equals(row:get(1, j), e:get(i, j)) end
          end
        end
      end
    end
  end)
end)

describe("reductions over a window's two small dims", function()
  it("a box blur (mean over 3x3 and 5x5 windows) against Lua sums", function()
    for _, dt in ipairs({ "float32", "float64", "int32", "uint8" }) do
      for _, size in ipairs({ 3, 5 }) do
        local p = filled(dt, 12, 30, size)
        local v = p:unfold(1, size, 1):unfold(2, size, 1)
        local m, s = v:mean({ 3, 4 }), v:sum({ 3, 4 })
        for i = 1, v:size(1) do
          for j = 1, v:size(2) do
            local sum = 0
            for a = 1, size do for b = 1, size do sum = sum + p:get(i + a - 1, j + b - 1) end end
            local want = sum / (size * size)
            local tol = dt == "float32" and 1e-6 or 1e-13
            assert(math.abs(m:get(i, j) - want) <= tol * math.max(1, math.abs(want)),
              ("%s %dx%d mean (%d, %d): %s vs %s"):format(dt, size, size, i, j, m:get(i, j), want))
            assert(math.abs(s:get(i, j) - sum) <= tol * math.max(1, math.abs(sum)),
              ("%s %dx%d sum (%d, %d)"):format(dt, size, size, i, j))
          end
        end
      end
    end
  end)
end)
