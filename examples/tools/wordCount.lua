-- Counts the words, lines and characters of a text; needs nothing from the host.
return {
  name = "word_count",
  description = "Count the words, lines and characters in a piece of text",
  parameters = {
    type = "object",
    properties = {
      text = { type = "string", description = "The text to count" },
      top = { type = "integer", description = "How many of the most frequent words to return", minimum = 0, maximum = 50, default = 3 },
    },
    required = { "text" },
  },
  execute = function(params, ctx)
    local words, frequency = 0, {}
    for word in params.text:gmatch("%w+") do
      words = words + 1
      local key = word:lower()
      frequency[key] = (frequency[key] or 0) + 1
    end
    local _, newlines = params.text:gsub("\n", "")
    local ranked = {}
    for word, count in pairs(frequency) do ranked[#ranked + 1] = { word = word, count = count } end
    table.sort(ranked, function(a, b) return a.count > b.count or (a.count == b.count and a.word < b.word) end)
    local top = {}
    for i = 1, math.min(params.top, #ranked) do top[i] = ranked[i] end
    return { words = words, lines = newlines + 1, characters = #params.text, top = top }
  end,
}
