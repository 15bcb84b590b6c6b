-- The block cache of recently freed storages (src/core/storage.c): reuse
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

  it("keeps a temporaries loop bounded", function()
    local s = nd.rand(18000)
    collectgarbage()
    local before = collectgarbage("count")
    for _ = 1, 2000 do local _ = s + s end
    assert.is_true(collectgarbage("count") - before < 4096)
  end)
end)
