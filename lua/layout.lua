-- nd.layout(t): how t walks its storage, as text -- the address formula
-- with t's numbers, contiguity, the storage span, and for small storages a
-- picture of which cells the view reaches and in which order (the seeds'
-- print_internal, drawn). Pure Lua over the introspection methods.
local C = ...
local PICTURE_MAX = 64 -- storages up to this many elements get a picture
local ROW = 16         -- cells per picture row

return function(ext)
  local nd, check = ext.nd, C.check
  local fmt, concat = string.format, table.concat

  local function list(v)
    local p = {}
    for i = 1, #v do p[i] = fmt("%d", v[i]) end
    return "{" .. concat(p, ", ") .. "}"
  end

  -- Storage cell (0-based element offset) of every element, row-major.
  local function cells(size, stride, offset)
    local n, out, idx = #size, {}, {}
    for d = 1, n do if size[d] == 0 then return out end end
    local function rec(d, off)
      if d > n then out[#out + 1] = off; return end
      for i = 0, size[d] - 1 do rec(d + 1, off + i * stride[d]) end
    end
    rec(1, offset)
    return out
  end

  local function layout(t)
    check(t, "layout")
    local size, stride, offset = t:size(), t:stride(), t:storage_offset()
    local dtype, esize, n = t:dtype(), t:element_size(), t:numel()
    local total = t:storage():numel()
    local dims = #size
    local L = {}
    L[#L + 1] = fmt("%s tensor, size %s, stride %s, storage_offset %d",
      dtype, list(size), list(stride), offset)
    -- The formula, with the numbers.
    local idx, terms = {}, { fmt("%d", offset) }
    for d = 1, dims do
      idx[d] = "i" .. d
      terms[#terms + 1] = fmt("(i%d-1)*%d", d, stride[d])
    end
    L[#L + 1] = fmt("element (%s) is at data + (%s) * %d bytes",
      dims == 0 and "" or concat(idx, ", "), concat(terms, " + "), esize)
    if n > 0 and dims > 0 then
      local last, off = {}, offset
      for d = 1, dims do last[d] = fmt("%d", size[d]); off = off + (size[d] - 1) * stride[d] end
      L[#L + 1] = fmt("  e.g. the last element (%s) is storage cell %d (byte %d)",
        concat(last, ", "), off, off * esize)
    end
    -- Contiguity.
    local rm, acc = {}, 1
    for d = dims, 1, -1 do rm[d] = acc; acc = acc * math.max(size[d], 1) end
    L[#L + 1] = t:is_contiguous() and
      "contiguous: yes (row-major: consecutive elements are adjacent cells)" or
      fmt("contiguous: no (row-major strides would be %s)", list(rm))
    -- The span.
    local lo, hi = offset, offset
    for d = 1, dims do
      local s = (size[d] - 1) * stride[d]
      if size[d] == 0 then lo, hi = 0, -1; break end
      if s < 0 then lo = lo + s else hi = hi + s end
    end
    L[#L + 1] = fmt("storage: %d elements (%d bytes); the view reaches %s",
      total, total * esize,
      n == 0 and "no cell (it is empty)" or
      fmt("cells %d..%d (a span of %d for %d elements%s)", lo, hi, hi - lo + 1, n,
        hi - lo + 1 < n and ": some cells are reached more than once" or ""))
    -- The picture: each cell shows the (1-based, row-major) visit number of
    -- the element there, "." when the view does not reach it, "*" after a
    -- number when later elements reach the same cell again.
    if total <= PICTURE_MAX and n > 0 then
      local first, again = {}, {}
      for k, c in ipairs(cells(size, stride, offset)) do
        if first[c] then again[c] = true else first[c] = k end
      end
      local w = math.max(#tostring(total - 1), #tostring(n) + 1)
      L[#L + 1] = "cells in visit order (. = not reached, * = reached again):"
      for r = 0, total - 1, ROW do
        local head, body = {}, {}
        for c = r, math.min(r + ROW, total) - 1 do
          head[#head + 1] = fmt("%" .. w .. "d", c)
          local v = first[c] and (tostring(first[c]) .. (again[c] and "*" or "")) or "."
          body[#body + 1] = fmt("%" .. w .. "s", v)
        end
        L[#L + 1] = "  cell  " .. concat(head, " ")
        L[#L + 1] = "  visit " .. concat(body, " ")
      end
    end
    return concat(L, "\n")
  end
  layout = ext.checked("layout", layout)
  nd.layout = layout
  ext.methods.layout = layout
end
