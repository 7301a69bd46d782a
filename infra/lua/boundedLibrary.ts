/**
 * Lua source run by the driver before any script: bounded versions of the library functions that
 * can run for a long time inside the C library, where the instruction hook (and with it the
 * timeout) does not reach. `string.rep` refuses results over the memory limit and answers an empty
 * result at once; `table.move` refuses ranges longer than the memory limit could hold; the pattern functions (`find`, `match`, `gmatch`, `gsub`) run natively while the
 * worst case of their backtracking is small, and otherwise on the Lua port of the matcher below,
 * whose every step the hook counts. The port follows Lua 5.4's lstrlib.c, in the C locale.
 * Expects the locals `type`, `error`, `tostring` and the global `string` of the driver; reads
 * `memory_bytes`, the script's memory limit.
 */
export const BOUNDED_LIBRARY = String.raw`
do
  local byte, sub, char, concat = string.byte, string.sub, string.char, table.concat
  local raw_rep, raw_find, raw_match, raw_gmatch, raw_gsub =
    string.rep, string.find, string.match, string.gmatch, string.gsub
  local tointeger = math.tointeger
  local raw_move = table.move

  table.move = function(a1, f, e, t, a2)
    if type(f) == 'number' and type(e) == 'number' and e - f + 1 > memory_bytes then
      error('table.move: a range of ' .. (e - f + 1) .. ' elements is more than the memory limit can hold', 2)
    end
    return raw_move(a1, f, e, t, a2)
  end

  string.rep = function(s, n, sep)
    if (type(s) == 'string' or type(s) == 'number') and type(n) == 'number' and n > 0 then
      local unit = #tostring(s) + (sep == nil and 0 or #tostring(sep))
      if unit == 0 then return '' end
      if unit * n > memory_bytes then
        error('string.rep: the result would exceed the memory limit of ' .. memory_bytes .. ' bytes', 2)
      end
    end
    return raw_rep(s, n, sep)
  end

  -- Above this many steps in the worst case, a pattern runs on the Lua matcher instead of the C one.
  local NATIVE_STEPS = 2e6
  local MAXCAPTURES, CAP_UNFINISHED, CAP_POSITION = 32, -1, -2
  local ESC = 37

  -- A bound on the C matcher's steps: starts x pattern length x 2(n+1) per repeating item x 2 per '?'.
  local function worst_steps(n, p, anchored)
    local steps = (anchored and 1 or (n + 1)) * (#p + 1)
    local i = 1
    while i <= #p and steps <= NATIVE_STEPS do
      local c = byte(p, i)
      if c == ESC then
        local d = byte(p, i + 1)
        if d == 98 then steps = steps * 2 * (n + 1) i = i + 4 -- %bxy
        elseif d and d >= 48 and d <= 57 then steps = steps * 2 * (n + 1) i = i + 2 -- back reference
        else i = i + 2 end
      elseif c == 42 or c == 43 or c == 45 then steps = steps * 2 * (n + 1) i = i + 1 -- * + -
      elseif c == 63 then steps = steps * 2 i = i + 1 -- ?
      else i = i + 1 end
    end
    return steps
  end

  local function class_matches(c, cl)
    local lower, res = cl | 32, nil
    if cl < 65 or (cl > 90 and cl < 97) or cl > 122 then return cl == c end
    if lower == 97 then res = (c >= 65 and c <= 90) or (c >= 97 and c <= 122)
    elseif lower == 99 then res = c < 32 or c == 127
    elseif lower == 100 then res = c >= 48 and c <= 57
    elseif lower == 103 then res = c > 32 and c < 127
    elseif lower == 108 then res = c >= 97 and c <= 122
    elseif lower == 112 then
      res = (c >= 33 and c <= 47) or (c >= 58 and c <= 64) or (c >= 91 and c <= 96) or (c >= 123 and c <= 126)
    elseif lower == 115 then res = c == 32 or (c >= 9 and c <= 13)
    elseif lower == 117 then res = c >= 65 and c <= 90
    elseif lower == 119 then res = (c >= 48 and c <= 57) or (c >= 65 and c <= 90) or (c >= 97 and c <= 122)
    elseif lower == 120 then res = (c >= 48 and c <= 57) or (c >= 65 and c <= 70) or (c >= 97 and c <= 102)
    else return cl == c end
    if cl <= 90 then return not res end
    return res
  end

  -- A matcher over subject s (length n) and pattern p: match(si, pi) answers the end of a match
  -- starting at si with the pattern from pi, or nil. Positions are 1-based; n + 1 is the end.
  local function matcher(s, p)
    local n, plen = #s, #p
    local ms = { level = 0, init = {}, len = {}, depth = 200 }

    local function class_end(pi)
      local c = byte(p, pi)
      pi = pi + 1
      if c == ESC then
        if pi > plen then error("malformed pattern (ends with '%')", 0) end
        return pi + 1
      elseif c == 91 then
        if byte(p, pi) == 94 then pi = pi + 1 end
        repeat
          if pi > plen then error("malformed pattern (missing ']')", 0) end
          local d = byte(p, pi)
          pi = pi + 1
          if d == ESC and pi <= plen then pi = pi + 1 end
        until byte(p, pi) == 93
        return pi + 1
      end
      return pi
    end

    -- The set [...] from pi (at '[') to ec (at its ']').
    local function bracket_matches(c, pi, ec)
      local sig = true
      if byte(p, pi + 1) == 94 then sig = false pi = pi + 1 end
      pi = pi + 1
      while pi < ec do
        local d = byte(p, pi)
        if d == ESC then
          pi = pi + 1
          if class_matches(c, byte(p, pi)) then return sig end
        elseif byte(p, pi + 1) == 45 and pi + 2 < ec then
          if d <= c and c <= byte(p, pi + 2) then return sig end
          pi = pi + 2
        elseif d == c then return sig end
        pi = pi + 1
      end
      return not sig
    end

    local function single_matches(si, pi, ep)
      if si > n then return false end
      local c, d = byte(s, si), byte(p, pi)
      if d == 46 then return true
      elseif d == ESC then return class_matches(c, byte(p, pi + 1))
      elseif d == 91 then return bracket_matches(c, pi, ep - 1)
      else return d == c end
    end

    local match

    local function max_expand(si, pi, ep)
      local i = 0
      while single_matches(si + i, pi, ep) do i = i + 1 end
      while i >= 0 do
        local res = match(si + i, ep + 1)
        if res then return res end
        i = i - 1
      end
      return nil
    end

    local function min_expand(si, pi, ep)
      while true do
        local res = match(si, ep + 1)
        if res then return res end
        if single_matches(si, pi, ep) then si = si + 1 else return nil end
      end
    end

    local function start_capture(si, pi, what)
      local level = ms.level
      if level >= MAXCAPTURES then error('too many captures', 0) end
      ms.init[level + 1], ms.len[level + 1] = si, what
      ms.level = level + 1
      local res = match(si, pi)
      if res == nil then ms.level = ms.level - 1 end
      return res
    end

    local function end_capture(si, pi)
      local l = ms.level
      while l >= 1 and ms.len[l] ~= CAP_UNFINISHED do l = l - 1 end
      if l < 1 then error('invalid pattern capture', 0) end
      ms.len[l] = si - ms.init[l]
      local res = match(si, pi)
      if res == nil then ms.len[l] = CAP_UNFINISHED end
      return res
    end

    local function match_capture(si, d)
      local l = d - 48
      if l < 1 or l > ms.level or ms.len[l] == CAP_UNFINISHED then error('invalid capture index %' .. l, 0) end
      local len = ms.len[l]
      if n - si + 1 >= len and sub(s, ms.init[l], ms.init[l] + len - 1) == sub(s, si, si + len - 1) then
        return si + len
      end
      return nil
    end

    local function balance(si, pi)
      if pi >= plen then error("malformed pattern (missing arguments to '%b')", 0) end
      if si > n or byte(s, si) ~= byte(p, pi) then return nil end
      local b, e, cont = byte(p, pi), byte(p, pi + 1), 1
      si = si + 1
      while si <= n do
        local c = byte(s, si)
        if c == e then
          cont = cont - 1
          if cont == 0 then return si + 1 end
        elseif c == b then cont = cont + 1 end
        si = si + 1
      end
      return nil
    end

    match = function(si, pi)
      ms.depth = ms.depth - 1
      if ms.depth == 0 then error('pattern too complex', 0) end
      while pi <= plen do
        local c = byte(p, pi)
        if c == 40 then -- (
          if byte(p, pi + 1) == 41 then si = start_capture(si, pi + 2, CAP_POSITION)
          else si = start_capture(si, pi + 1, CAP_UNFINISHED) end
          break
        elseif c == 41 then -- )
          si = end_capture(si, pi + 1)
          break
        elseif c == 36 and pi == plen then -- $ at the end
          if si ~= n + 1 then si = nil end
          break
        elseif c == ESC and byte(p, pi + 1) == 98 then -- %b
          si = balance(si, pi + 2)
          if si == nil then break end
          pi = pi + 4
        elseif c == ESC and byte(p, pi + 1) == 102 then -- %f
          pi = pi + 2
          if byte(p, pi) ~= 91 then error("missing '[' after '%f' in pattern", 0) end
          local ep = class_end(pi)
          local previous = si == 1 and 0 or byte(s, si - 1)
          local current = si <= n and byte(s, si) or 0
          if bracket_matches(previous, pi, ep - 1) or not bracket_matches(current, pi, ep - 1) then si = nil break end
          pi = ep
        elseif c == ESC and (byte(p, pi + 1) or 0) >= 48 and (byte(p, pi + 1) or 0) <= 57 then -- back reference
          si = match_capture(si, byte(p, pi + 1))
          if si == nil then break end
          pi = pi + 2
        else
          local ep = class_end(pi)
          local q = byte(p, ep)
          if not single_matches(si, pi, ep) then
            if q == 42 or q == 63 or q == 45 then pi = ep + 1
            else si = nil break end
          elseif q == 63 then -- ?
            local res = match(si + 1, ep + 1)
            if res then si = res break end
            pi = ep + 1
          elseif q == 43 then si = max_expand(si + 1, pi, ep) break
          elseif q == 42 then si = max_expand(si, pi, ep) break
          elseif q == 45 then si = min_expand(si, pi, ep) break
          else si = si + 1 pi = ep end
        end
      end
      ms.depth = ms.depth + 1
      return si
    end

    local function capture(i, si, ei)
      if i > ms.level then
        if i ~= 1 then error('invalid capture index %' .. i, 0) end
        return sub(s, si, ei - 1)
      end
      local len = ms.len[i]
      if len == CAP_UNFINISHED then error('unfinished capture', 0) end
      if len == CAP_POSITION then return ms.init[i] end
      return sub(s, ms.init[i], ms.init[i] + len - 1)
    end

    local function captures(si, ei, whole)
      local count = (ms.level == 0 and whole) and 1 or ms.level
      local list = {}
      for i = 1, count do list[i] = capture(i, si, ei) end
      return list, count
    end

    local function reset() ms.level, ms.depth = 0, 200 end

    return { match = match, captures = captures, capture = capture, reset = reset, n = n }
  end

  local function check_string(value, arg, name)
    if type(value) == 'number' then return tostring(value) end
    if type(value) ~= 'string' then
      error("bad argument #" .. arg .. " to '" .. name .. "' (string expected, got " .. type(value) .. ")", 3)
    end
    return value
  end

  local function start_of(init, len)
    if init == nil then return 1 end
    init = tointeger(init)
    if init == nil then error("bad argument #3 (number has no integer representation)", 3) end
    if init > 0 then return init elseif init == 0 then return 1
    elseif init < -len then return 1 else return len + init + 1 end
  end

  local function unpack_list(list, count, i)
    i = i or 1
    if i > count then return end
    return list[i], unpack_list(list, count, i + 1)
  end

  -- The C search compares the whole needle at every place: n x m steps.
  local function plain_find(s, p, start)
    local m = #p
    if (#s - start + 1) * (m + 1) <= NATIVE_STEPS then return raw_find(s, p, start, true) end
    local first = byte(p, 1)
    for si = start, #s - m + 1 do
      if byte(s, si) == first and sub(s, si, si + m - 1) == p then return si, si + m - 1 end
    end
    return nil
  end

  local function find_aux(is_find, s, p, init, plain, name)
    s, p = check_string(s, 1, name), check_string(p, 2, name)
    local start = start_of(init, #s)
    if start > #s + 1 then return nil end
    local native = is_find and raw_find or raw_match
    if is_find and (plain or not raw_find(p, '[%^%$%*%+%?%.%(%[%%%-]')) then return plain_find(s, p, start) end
    local anchored = byte(p, 1) == 94
    if worst_steps(#s - start + 1, p, anchored) <= NATIVE_STEPS then return native(s, p, init, plain) end
    if anchored then p = sub(p, 2) end
    local m = matcher(s, p)
    local si = start
    repeat
      m.reset()
      local e = m.match(si, 1)
      if e then
        if is_find then
          local list, count = m.captures(si, e, false)
          return si, e - 1, unpack_list(list, count)
        end
        return unpack_list(m.captures(si, e, true))
      end
      si = si + 1
    until si > m.n + 1 or anchored
    return nil
  end

  string.find = function(s, p, init, plain) return find_aux(true, s, p, init, plain, 'find') end
  string.match = function(s, p, init) return find_aux(false, s, p, init, nil, 'match') end

  string.gmatch = function(s, p, init)
    s, p = check_string(s, 1, 'gmatch'), check_string(p, 2, 'gmatch')
    local start = start_of(init, #s)
    if worst_steps(#s - start + 1, p, false) <= NATIVE_STEPS then return raw_gmatch(s, p, init) end
    if start > #s + 1 then start = #s + 2 end
    local m, si, last = matcher(s, p), start, nil
    return function()
      while si <= m.n + 1 do
        m.reset()
        local e = m.match(si, 1)
        if e and e ~= last then
          local from = si
          si, last = e, e
          return unpack_list(m.captures(from, e, true))
        end
        si = si + 1
      end
      return nil
    end
  end

  string.gsub = function(s, p, repl, max)
    s, p = check_string(s, 1, 'gsub'), check_string(p, 2, 'gsub')
    local kind = type(repl)
    if kind ~= 'string' and kind ~= 'number' and kind ~= 'table' and kind ~= 'function' then
      error("bad argument #3 to 'gsub' (string/function/table expected, got " .. kind .. ")", 2)
    end
    local anchored = byte(p, 1) == 94
    if worst_steps(#s, p, anchored) <= NATIVE_STEPS then return raw_gsub(s, p, repl, max) end
    if anchored then p = sub(p, 2) end
    if kind == 'number' then repl = tostring(repl) kind = 'string' end
    local limit = max == nil and #s + 1 or tointeger(max)
    if limit == nil then error("bad argument #4 to 'gsub' (number has no integer representation)", 2) end
    local m, out, si, last, count = matcher(s, p), {}, 1, nil, 0

    local function replacement(from, e)
      local whole = sub(s, from, e - 1)
      if kind == 'string' then
        local parts, i = {}, 1
        while i <= #repl do
          local c = byte(repl, i)
          if c == ESC then
            i = i + 1
            local d = byte(repl, i)
            if d == ESC then parts[#parts + 1] = '%'
            elseif d and d >= 48 and d <= 57 then
              parts[#parts + 1] = d == 48 and whole or tostring(m.capture(d - 48, from, e))
            else error("invalid use of '%' in replacement string", 3) end
          else parts[#parts + 1] = char(c) end
          i = i + 1
        end
        return concat(parts)
      end
      local value
      if kind == 'table' then value = repl[m.capture(1, from, e)]
      else value = repl(unpack_list(m.captures(from, e, true))) end
      if value == nil or value == false then return whole end
      if type(value) ~= 'string' and type(value) ~= 'number' then
        error('invalid replacement value (a ' .. type(value) .. ')', 3)
      end
      return tostring(value)
    end

    while count < limit do
      m.reset()
      local e = m.match(si, 1)
      if e and e ~= last then
        count = count + 1
        out[#out + 1] = replacement(si, e)
        si, last = e, e
      elseif si <= m.n then
        out[#out + 1] = sub(s, si, si)
        si = si + 1
      else break end
      if anchored then break end
    end
    out[#out + 1] = sub(s, si)
    return concat(out), count
  end
end
`;
