-- Searches the ledger and returns just the titles and ids of the best matches.
return {
  name = "related_titles",
  description = "Find documents related to a topic and list their titles",
  parameters = {
    type = "object",
    properties = {
      topic = { type = "string", description = "What to look for", minLength = 1 },
      limit = { type = "integer", description = "At most this many titles", minimum = 1, maximum = 20, default = 5 },
      source = { type = "string", description = "Only documents from this source" },
    },
    required = { "topic" },
  },
  execute = function(params, ctx)
    local found = ctx.search(params.topic, { mode = "keyword", limit = params.limit, source = params.source })
    local titles = {}
    for _, hit in ipairs(found.results or {}) do
      titles[#titles + 1] = { id = hit.id, title = hit.title or hit.source_id }
    end
    ctx.log("related_titles", params.topic, #titles)
    return { topic = params.topic, titles = titles }
  end,
}
