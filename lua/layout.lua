-- nd.layout(t): how t walks its storage, as text -- the address formula
-- with t's numbers, contiguity, the storage span, and for small storages a
-- picture of which cells the view reaches and in which order (the seeds'
-- print_internal, drawn). The numbers come from C (ltensor.c's
-- layout_facts: the core's span and row-major strides, each element's
-- cell); this file only writes them out.
local C = ...
local PICTURE_MAX = 64 -- storages up to this many elements get a picture
local ROW = 16         -- cells per picture row

return function(ext)
  local nd, check, layout_facts = ext.nd, C.check, C.layout_facts
  local fmt, concat = string.format, table.concat

  local function list(v)
    local p = {}
    for i = 1, #v do p[i] = fmt("%d", v[i]) end
    return "{" .. concat(p, ", ") .. "}"
  end

  local function layout(t)
    check(t, "layout")
    local facts = layout_facts(t, PICTURE_MAX) -- the numbers are C's
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
      L[#L + 1] = fmt("  e.g. the last element %s is storage cell %d (byte %d)",
        list(size):gsub("^{(.*)}$", "(%1)"), facts.last, facts.last * esize)
    end
    -- Contiguity.
    L[#L + 1] = t:is_contiguous() and
      "contiguous: yes (row-major: consecutive elements are adjacent cells)" or
      fmt("contiguous: no (row-major strides would be %s)", list(facts.rowmajor))
    -- The span.
    local lo, hi = facts.lo, facts.hi
    L[#L + 1] = fmt("storage: %d elements (%d bytes); the view reaches %s",
      total, total * esize,
      n == 0 and "no cell (it is empty)" or
      fmt("cells %d..%d (a span of %d for %d elements%s)", lo, hi, hi - lo + 1, n,
        hi - lo + 1 < n and ": some cells are reached more than once" or ""))
    -- The picture: each cell shows the (1-based, row-major) visit number of
    -- the element there, "." when the view does not reach it, "*" after a
    -- number when later elements reach the same cell again.
    if facts.cells then
      local first, again = {}, {}
      for k, c in ipairs(facts.cells) do
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
