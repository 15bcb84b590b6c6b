-- nd.safetensors: load (copies, or views of one mapping), save, metadata.
-- The fixtures in spec/fixtures/safetensors were written by
-- tools/safetensors_fixtures.py from the format's description; the files
-- nd writes are compared byte for byte with committed ones that the same
-- tool's checker read back (its output: spec/fixtures/safetensors/*.txt).
local nd = require "nd"
local internal = require "nd.internal"

local DIR = "spec/fixtures/safetensors/"
local function slurp(p)
  local f = assert(io.open(p, "rb")); local s = f:read("*a"); f:close(); return s
end
local has = {}
for _, d in ipairs(internal.consts.dtypes) do has[d.name] = true end

-- The tensors of the golden file nd_written.safetensors: views of every
-- kind (transposed, strided, flipped, 0-d, empty), every dtype nd has.
local function golden_tensors()
  local a = nd.arange(12, "float64"):view(3, 4)
  local r = {
    ["w.T"] = a:t():float(),                           -- a copy: float32
    strided = a[{ {}, { 1, 4, 2 } }],                   -- float64, non-contiguous
    flipped = nd.arange(5, "int32"):flip(1),
    scalar = nd.tensor(7, "int64"),
    empty = nd.zeros(0, 2, "float32"),
    bytes = nd.tensor({ 0, 200, 255 }, "uint8"),
    mask = nd.tensor({ true, false, true, true }),
  }
  return r, { format = "pt", producer = "nd" }
end

describe("nd.safetensors", function()
  local paths = {}
  after_each(function() for _, p in ipairs(paths) do os.remove(p) end paths = {} end)
  local function tmp() local p = os.tmpname(); paths[#paths + 1] = p; return p end

  it("loads the Python-written fixture: names, dtypes, shapes, values", function()
    for _, mode in ipairs({ false, true, "c" }) do
      local t = nd.safetensors.load(DIR .. "basic.safetensors", mode and { mmap = mode } or nil)
      assert.same({ { 0, 0.25, 0.5 }, { 0.75, 1, 1.25 } }, t.weight:totable())
      assert.equals("float32", t.weight:dtype())
      assert.same({ 1.5, -2 }, t.bias:totable())
      assert.equals(0, t.step:dim())
      assert.equals(7, t.step:item())
      assert.same({ 0, 4 }, { t.empty:size(1), t.empty:size(2) })
      assert.same({ true, false, true }, t.mask:totable())
      assert.same({ 3, -1 }, t.ids:totable())
      assert.equals("int32", t.ids:dtype())
      assert.same({ 0, 255 }, t.pix:totable())
      for _, v in pairs(t) do assert.equals(mode == true, v:is_readonly()) end
    end
  end)

  it("mmap = true: read-only views of one shared mapping; \"c\": writable, the file unchanged", function()
    local p = tmp()
    local f = io.open(p, "wb"); f:write(slurp(DIR .. "basic.safetensors")); f:close()
    local before = slurp(p)
    local r = nd.safetensors.load(p, { mmap = true })
    assert.is_true(nd.same_storage(r.weight, r.bias))
    assert_error_matches(function() r.weight:fill_(0) end, "fill_", "read-only")
    local c = nd.safetensors.load(p, { mmap = "c" })
    c.weight:fill_(9)
    c.ids[1] = 5
    assert.equals(before, slurp(p))
    assert.equals(9, c.weight:get(1, 1))
    -- the mapping outlives the table and the first tensors
    local w = r.weight:narrow(2, 2, 2)
    r, c = nil, nil
    for _ = 1, 3 do collectgarbage() end
    os.remove(p)
    assert.same({ { 0.25, 0.5 }, { 1, 1.25 } }, w:totable())
  end)

  it("every safetensors dtype nd has; the others are refused naming the dtype", function()
    local file = DIR .. "all_dtypes.safetensors"
    local meta, info = nd.safetensors.metadata(file)
    assert.same({ format = "pt", note = "é" }, meta)
    local missing = {}
    for name, d in pairs(info) do
      if d.dtype == nil then missing[#missing + 1] = d.safetensors_dtype end
    end
    if #missing == 0 then
      local t = nd.safetensors.load(file)
      assert.same({ 1, 2 }, t.bf16:float():totable())
      for name, v in pairs(t) do
        if name ~= "bf16" and name ~= "t_bool" then
          local want = name:find("^t_i") and { { -2, -1, 0 }, { 1, 2, 3 } } or { { 0, 1, 2 }, { 3, 4, 5 } }
          assert.same(want, v:totable(), name)
        end
      end
    else
      table.sort(missing)
      assert_error_matches(function() nd.safetensors.load(file) end,
        "safetensors.load", file, "is not supported by this build")
      local err = select(2, pcall(nd.safetensors.load, file))
      local named = false
      for _, m in ipairs(missing) do named = named or err:find("dtype " .. m .. " ", 1, true) ~= nil end
      assert.is_true(named, err)
    end
    -- the tensors nd has, each alone, through save and load
    for name, d in pairs(info) do
      if d.dtype and name ~= "bf16" then
        assert.is_true(has[d.dtype])
        assert.same({ 2, 3 }, d.shape, name)
      end
    end
    assert.same({ 2 }, info.bf16.shape)
    assert.equals("BF16", info.bf16.safetensors_dtype)
    assert.equals(info.bf16.data_offsets[2] - info.bf16.data_offsets[1], 4)
  end)

  it("a misaligned tensor is copied even with mmap (and stays read-only under mmap = true)", function()
    local file = DIR .. "misaligned.safetensors"
    for _, mode in ipairs({ true, "c" }) do
      local t = nd.safetensors.load(file, { mmap = mode })
      assert.same({ 1, 2, 3 }, t.x:totable())
      assert.same({ 9 }, t.b:totable())
      assert.is_false(nd.same_storage(t.x, t.b))
      assert.equals(mode == true, t.x:is_readonly())
    end
  end)

  it("bool bytes other than 0 and 1 read as true", function()
    for _, mode in ipairs({ false, true, "c" }) do
      local t = nd.safetensors.load(DIR .. "odd_bool.safetensors", mode and { mmap = mode } or nil)
      assert.same({ false, true, true, true }, t.m:totable())
      assert.equals(0, t.m:to("uint8"):totable()[1])
      assert.equals(1, t.m:to("uint8"):totable()[3])
    end
  end)

  it("save writes what the committed golden file holds, byte for byte, and loads back", function()
    local ts, meta = golden_tensors()
    local p = tmp()
    nd.safetensors.save(p, ts, meta)
    assert.equals(slurp(DIR .. "nd_written.safetensors"), slurp(p))
    local back = nd.safetensors.load(p)
    for name, t in pairs(ts) do
      assert.equals(t:dtype(), back[name]:dtype())
      assert.is_true(nd.equal(t, back[name]), name)
    end
    local m = nd.safetensors.metadata(p)
    assert.same(meta, m)
    -- no metadata: no __metadata__ key
    nd.safetensors.save(p, { x = nd.ones(2) })
    assert.falsy(slurp(p):find("__metadata__", 1, true))
    assert.same({}, (nd.safetensors.metadata(p)))
    -- no tensors at all
    nd.safetensors.save(p, {})
    assert.same({}, nd.safetensors.load(p))
  end)

  it("save's header is padded to 8 bytes and every tensor aligned to its element size", function()
    local p = tmp()
    nd.safetensors.save(p, { a = nd.ones(3, "uint8"), b = nd.ones(1, "float64"),
      c = nd.ones(1, "int32"), dd = nd.ones(2, "bool") })
    local s = slurp(p)
    local n = 0
    for i = 8, 1, -1 do n = n * 256 + s:byte(i) end
    assert.equals(0, n % 8)
    local _, info = nd.safetensors.metadata(p)
    local size = { float64 = 8, int32 = 4, uint8 = 1, bool = 1 }
    for name, d in pairs(info) do assert.equals(0, (8 + n + d.data_offsets[1]) % size[d.dtype], name) end
    assert.same({ 0, 8 }, info.b.data_offsets)   -- float64 first,
    assert.same({ 8, 12 }, info.c.data_offsets)  -- then int32,
    assert.same({ 12, 15 }, info.a.data_offsets) -- then 1-byte ones by name
    assert.same({ 15, 17 }, info.dd.data_offsets)
  end)

  it("rejects hostile files, naming the function, the file and the reason", function()
    local cases = {
      hole = "a hole", overlap = "an overlap", past_end = "the tensors hold 16 bytes",
      negative = "data_offsets must be", fraction = "has a fraction or an exponent",
      whole_fraction = "the number at byte 48 of the header has a fraction",
      exponent = "has a fraction or an exponent",
      huge_offset = "data_offsets must be", range_mismatch = "hold 8",
      unknown_dtype = "unknown dtype 'F128'", overflow_shape = "more bytes than an int64",
      not_object = "not a JSON object", bad_meta = "__metadata__ must map strings",
      extra_key = "unexpected or repeated key 'extra'", no_shape = "has no shape",
      duplicate = "appears twice", utf8_name = "not valid UTF-8",
      header_past_end = "runs past the end", header_too_big = "limit of 100 MB",
      short = "too short", json = "not valid JSON", trailing = "bytes after the header",
    }
    for name, why in pairs(cases) do
      local file = DIR .. "bad_" .. name .. ".safetensors"
      for _, f in ipairs({ "load", "metadata" }) do
        assert_error_matches(function() nd.safetensors[f](file) end, "safetensors." .. f, file, why)
      end
      assert_error_matches(function() nd.safetensors.load(file, { mmap = true }) end, file, why)
    end
    assert_error_matches(function() nd.safetensors.load("/nonexistent.safetensors") end,
      "safetensors.load", "cannot open /nonexistent.safetensors")
  end)

  it("checks its arguments", function()
    local p = tmp()
    assert_error_matches(function() nd.safetensors.load(DIR .. "basic.safetensors", { mmap = "r+" }) end,
      "safetensors.load", "mmap must be true, false or \"c\"")
    assert_error_matches(function() nd.safetensors.load(DIR .. "basic.safetensors", { map = true }) end,
      "safetensors.load", "unknown option map")
    assert_error_matches(function() nd.safetensors.save(p, { x = 1 }) end, "safetensors.save", "tensor")
    assert_error_matches(function() nd.safetensors.save(p, { nd.ones(1) }) end, "safetensors.save", "names must be strings")
    assert_error_matches(function() nd.safetensors.save(p, { __metadata__ = nd.ones(1) }) end,
      "safetensors.save", "reserved")
    assert_error_matches(function() nd.safetensors.save(p, { ["\255"] = nd.ones(1) }) end,
      "safetensors.save", "not valid UTF-8")
    assert_error_matches(function() nd.safetensors.save(p, { x = nd.ones(1) }, { k = 1 }) end,
      "safetensors.save", "metadata must map strings to strings")
    assert_error_matches(function() nd.safetensors.save("/nonexistent/x", { x = nd.ones(1) }) end,
      "safetensors.save", "cannot open /nonexistent/x")
    assert_error_matches(function() nd.safetensors.metadata(p, 1) end, "safetensors.metadata")
    assert.is_nil(nd.methods.safetensors)
  end)
end)
