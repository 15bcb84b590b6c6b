-- nd.clock(): a monotonic wall clock in seconds (os.clock is CPU time).
local nd = require "nd"

describe("nd.clock", function()
  it("returns a number of seconds that never goes back", function()
    local last = nd.clock()
    assert.is_number(last)
    for _ = 1, 10000 do
      local now = nd.clock()
      assert(now >= last, ("nd.clock went back: %.17g after %.17g"):format(now, last))
      last = now
    end
  end)
  it("advances across a short busy loop", function()
    local t0, x, t = nd.clock(), 0, nil
    for _ = 1, 1e6 do -- far longer than the clock's resolution
      for i = 1, 1000 do x = x + i end
      t = nd.clock()
      if t > t0 then break end
    end
    assert(t > t0, ("nd.clock stayed at %.17g across the loop"):format(t0))
  end)
  it("is a module function, not a tensor method, and takes no arguments", function()
    assert.is_nil(nd.ones(2).clock)
    assert.is_number(nd.clock(nil))
    assert_error_matches(function() nd.clock(1) end, "clock: takes (), got 1 argument")
    assert_error_matches(function() nd.clock(nil, nd.ones(1)) end, "clock: takes (), got 2 arguments")
  end)
end)
