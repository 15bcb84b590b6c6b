local nd = require "nd"
describe("the suite", function()
  it("runs under LuaJIT with the in-tree module", function()
    assert.is_table(jit)
    assert.equals(6, nd.zeros(2, 3):numel())
  end)
end)
