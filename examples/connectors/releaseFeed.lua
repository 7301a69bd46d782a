-- A source that pages through a fixed feed; the cursor is the index of the next entry.
local feed = {
  { source_id = "1.0.0", title = "1.0.0", body = "First release.", updated_at = "2025-01-10T09:00:00Z" },
  { source_id = "1.1.0", title = "1.1.0", body = "Adds hybrid search.", updated_at = "2025-02-14T09:00:00Z" },
  { source_id = "1.2.0", title = "1.2.0", body = "Adds Lua tools.", updated_at = "2025-03-20T09:00:00Z", metadata = { tags = { "lua" } } },
}

return {
  name = "release_feed",
  description = "Release announcements, two per page",
  fetch = function(cursor, ctx)
    local start = tonumber(cursor or "0")
    local documents = {}
    for i = start + 1, math.min(start + 2, #feed) do documents[#documents + 1] = feed[i] end
    local next_index = start + #documents
    return { documents = documents, cursor = tostring(next_index), has_more = next_index < #feed }
  end,
}
