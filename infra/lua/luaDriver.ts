import { BOUNDED_LIBRARY } from './boundedLibrary.js';

/**
 * The trusted Lua code that runs before and around every script. It receives the host functions
 * and the job as globals, removes them, narrows the standard library to what is safe, loads the
 * script as text only, calls the requested entry point with `(input, ctx)` and hands back a plain
 * copy of the result (no functions, no metatables), so that nothing the script controls runs while
 * the host reads it.
 */
export const LUA_DRIVER = String.raw`
local host, job = __host, __job
__host, __job = nil, nil

local type, next, select, error, tostring, rawget = type, next, select, error, tostring, rawget
local raw_load, raw_setmetatable, raw_collectgarbage = load, setmetatable, collectgarbage
local concat = table.concat

dofile, loadfile, require, module = nil, nil, nil, nil
io, os, debug, package, utf8 = nil, nil, nil, nil, nil
string.dump = nil

local memory_bytes = job.memory_bytes
${BOUNDED_LIBRARY}

load = function(chunk, name, _mode, ...)
  if type(chunk) ~= 'string' then error('load accepts only source text', 2) end
  if select('#', ...) > 0 then return raw_load(chunk, name, 't', (...)) end
  return raw_load(chunk, name, 't')
end

setmetatable = function(t, mt)
  if type(mt) == 'table' and rawget(mt, '__gc') ~= nil then error('finalizers (__gc) are not allowed', 2) end
  return raw_setmetatable(t, mt)
end

collectgarbage = function(option)
  if option == nil or option == 'collect' or option == 'count' or option == 'step' then
    return raw_collectgarbage(option)
  end
  error('collectgarbage("' .. tostring(option) .. '") is not allowed', 2)
end

-- A deep copy holding only data the host can read safely.
local function plain(value, depth, seen)
  local kind = type(value)
  if kind == 'nil' or kind == 'boolean' or kind == 'number' or kind == 'string' then return value end
  if kind ~= 'table' then error('cannot pass a ' .. kind .. ' to the host', 0) end
  if depth > 64 then error('value is nested more than 64 levels deep', 0) end
  if seen[value] then error('value contains a cycle', 0) end
  seen[value] = true
  local copy = {}
  for key, item in next, value do
    local key_kind = type(key)
    if key_kind ~= 'string' and key_kind ~= 'number' then error('table keys must be strings or numbers', 0) end
    copy[key] = plain(item, depth + 1, seen)
  end
  seen[value] = nil
  return copy
end

local function to_host(value) return plain(value, 0, {}) end

-- Tables from the host arrive as flat lists of cells (see flattened() in luaRuntime.ts), rebuilt
-- here without recursion: count, then (key, is_table, value) per entry, table after table.
local function from_host(cells)
  if type(cells) ~= 'table' then return cells end
  local tables, id, pos = {}, 1, 1
  local function table_at(n)
    local t = tables[n]
    if t == nil then t = {} tables[n] = t end
    return t
  end
  while cells[pos] ~= nil do
    local t, count = table_at(id), cells[pos]
    pos = pos + 1
    for _ = 1, count do
      local key, nested, item = cells[pos], cells[pos + 1], cells[pos + 2]
      pos = pos + 3
      if nested then t[key] = table_at(item) else t[key] = item end
    end
    id = id + 1
  end
  return tables[1]
end

-- Host functions answer with a promise of { ok, value | error }. ctx's functions tail-call this,
-- so level 2 is the script's line that called them.
local function call_host(name, ...)
  local outcome = host[name](...):await()
  if not outcome.ok then error(outcome.error, 2) end
  return from_host(outcome.value)
end

local function describe(...)
  local parts = {}
  for i = 1, select('#', ...) do parts[i] = tostring((select(i, ...))) end
  return concat(parts, ' ')
end

local ctx = {
  search = function(query, options) return call_host('search', query, to_host(options or {})) end,
  get = function(id) return call_host('get', id) end,
  sources = function() return call_host('sources') end,
  json = {
    encode = function(value)
      local outcome = host.json_encode(to_host(value))
      if not outcome.ok then error(outcome.error, 2) end
      return outcome.value
    end,
    decode = function(text)
      local outcome = host.json_decode(text)
      if not outcome.ok then error(outcome.error, 2) end
      return from_host(outcome.value)
    end,
  },
  log = function(...) host.log(describe(...)) end,
}
if host.http_get then
  ctx.http = {
    get = function(url, options) return call_host('http_get', url, to_host(options or {})) end,
  }
end
print = function(...) host.log(describe(...)) end

local function main()
  local chunk, problem = raw_load(job.source, job.chunkname, 't')
  if not chunk then error(problem, 0) end
  local definition = chunk()
  if type(definition) ~= 'table' then definition = rawget(_G, job.kind) end
  if type(definition) ~= 'table' then
    error('the script must return a ' .. job.kind .. ' table (or set the global "' .. job.kind .. '")', 0)
  end
  if job.entry == nil then
    local fields, functions = {}, {}
    for key, value in next, definition do
      if type(value) == 'function' then functions[#functions + 1] = key else fields[key] = value end
    end
    return { fields = to_host(fields), functions = functions }
  end
  local entry = definition[job.entry]
  if type(entry) ~= 'function' then error(job.kind .. '.' .. job.entry .. ' must be a function', 0) end
  return { value = to_host(entry(from_host(job.input), ctx)) }
end

local ok, result = pcall(main)
if ok then return { ok = true, result = result } end
if type(result) == 'userdata' then result = tostring(result)
elseif type(result) ~= 'string' then result = 'error object of type ' .. type(result) end
return { ok = false, error = result }
`;
