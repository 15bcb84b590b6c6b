-- The block cache of recently freed storages (src/core/base/storage.c): reuse
-- never hands out memory a live view still reaches, and fresh zeros are
-- zeros even when the block was used before.
local nd = require "nd"

describe("the storage block cache", function()
  it("never hands out a block a view still reaches", function()
    local base = nd.full({ 18000 }, 7)
    local view = base:narrow(1, 100, 10)
    base = nil
    for _ = 1, 3 do collectgarbage() end
    for _ = 1, 50 do
      local t = nd.full({ 18000 }, -1)
      t:release()
    end
    assert.same({ 7, 7, 7, 7, 7, 7, 7, 7, 7, 7 }, view:totable())
  end)

  it("gives zeros from a reused block", function()
    for _ = 1, 20 do
      local t = nd.full({ 5000 }, 3)
      t:release()
      local z = nd.zeros(5000)
      assert.equals(0, z:abs():sum())
    end
  end)

  it("never hands out a small block twice (tiny tensors and headers)", function()
    local keep = {}
    for i = 1, 3000 do
      local t = nd.full({ 1 + i % 7 }, i) -- sizes across several classes
      if i % 3 == 0 then keep[#keep + 1] = t end
      if i % 500 == 0 then collectgarbage() end
    end
    collectgarbage()
    for k, t in ipairs(keep) do
      local i = 3 * k
      assert.equals(1 + i % 7, t:numel())
      assert.equals(i * t:numel(), t:sum())
    end
  end)

  it("hands a block released at once to the next result, ahead of older ones", function()
    local s = nd.rand(18000)
    for _ = 1, 20 do local _ = s + s end
    collectgarbage()
    collectgarbage() -- older blocks of this size now wait in the cache
    local r = s + s
    local p = r:data_ptr()
    r:release()
    local r2 = s + s
    if not os.getenv("ND_NO_CACHE") and not (os.getenv("LD_PRELOAD") or ""):find("asan") then
      assert.equals(p, r2:data_ptr()) -- still in cache: the warmest block
    end
    assert.equals(0, (r2 - s * 2):abs():max())
  end)

  it("keeps a temporaries loop bounded", function()
    local s = nd.rand(18000)
    collectgarbage()
    local before = collectgarbage("count")
    for _ = 1, 2000 do local _ = s + s end
    assert.is_true(collectgarbage("count") - before < 4096)
  end)

  -- Buffers of 4 MiB and more are kept too (a few): the same guarantees.
  it("reuses a large buffer, never one a view still reaches, and zeros it", function()
    local n = 1000000 -- 8 MB of float64
    local base = nd.full({ n }, 7)
    local view = base:narrow(1, n - 9, 10)
    local held = base:data_ptr()
    base:release()
    for _ = 1, 6 do
      local t = nd.full({ n }, -1)
      assert.is_true(t:data_ptr() ~= held)
      t:release()
    end
    assert.same({ 7, 7, 7, 7, 7, 7, 7, 7, 7, 7 }, view:totable())
    local t = nd.full({ n }, 3)
    local p = t:data_ptr()
    t:release()
    local z = nd.zeros(n - 1000) -- within the reuse slack
    if not os.getenv("ND_NO_CACHE") and not (os.getenv("LD_PRELOAD") or ""):find("asan") then
      assert.equals(p, z:data_ptr())
    end
    assert.equals(0, z:abs():sum())
  end)

  -- Large buffers of sizes no later call asks for made room for new ones:
  -- they had filled every slot for good, and each 4 MB temporary after
  -- them was fresh memory (a float16 matmul's operands in float32).
  it("keeps the newest large buffer when older sizes fill the slots", function()
    local old = {}
    for i = 1, 4 do old[i] = nd.zeros(2500000 + i) end -- 20 MB each
    for i = 1, 4 do old[i]:release() end
    -- 40 MB: past malloc's largest mmap threshold, so freed memory goes
    -- back to the kernel, and comes back as zeros
    local t = nd.full({ 10000000 }, 7, "float32")
    local p = t:data_ptr()
    t:release()
    -- the same block again, its old values still in it (freed memory
    -- would come back from the kernel as zeros)
    local again = nd.empty({ 10000000 }, "float32")
    if not os.getenv("ND_NO_CACHE") and not (os.getenv("LD_PRELOAD") or ""):find("asan") then
      assert.equals(p, again:data_ptr())
      assert.equals(7, again:min())
      assert.equals(7, again:max())
    end
  end)
end)
