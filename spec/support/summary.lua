-- Busted output handler: a dot per test, the failures in full, and a last
-- line "N passed, N failed" (errors count as failures; pending as skipped).
return function(options)
  local busted = require "busted"
  local handler = require("busted.outputHandlers.base")()

  local function write(s) io.write(s); io.flush() end

  handler.testEnd = function(element, parent, status)
    write(status == "success" and "." or status == "pending" and "-" or "F")
    return nil, true
  end

  local function report(list, label)
    for _, t in ipairs(list) do
      local where = t.trace and t.trace.short_src and
        (t.trace.short_src .. ":" .. tostring(t.trace.currentline)) or "?"
      write(("\n%s: %s\n  %s\n  %s\n"):format(label, t.name or "?", where,
        tostring(t.message):gsub("\n", "\n  ")))
    end
  end

  handler.suiteEnd = function()
    local s = handler.successesCount
    local f = handler.failuresCount + handler.errorsCount
    local p = handler.pendingsCount
    write("\n")
    report(handler.failures, "FAILED")
    report(handler.errors, "ERROR")
    write(("%d passed, %d failed%s\n"):format(s, f,
      p > 0 and (", %d skipped"):format(p) or ""))
    return nil, true
  end

  busted.subscribe({ "test", "end" }, handler.testEnd, { predicate = handler.cancelOnPending })
  busted.subscribe({ "suite", "end" }, handler.suiteEnd)
  return handler
end
