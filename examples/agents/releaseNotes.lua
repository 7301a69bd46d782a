-- An agent whose prompt is built by code: the message lists each area to cover.
return {
  name = "release_notes",
  description = "Draft release notes for a version from the ledger's documents",
  tools = { "search", "get" },
  arguments = {
    { name = "version", description = "The version being released", required = true },
    { name = "areas", description = "Comma-separated areas to cover", required = false },
  },
  render = function(args, ctx)
    local areas = {}
    for area in (args.areas or "features,fixes"):gmatch("[^,]+") do
      areas[#areas + 1] = "- " .. area:gsub("^%s+", ""):gsub("%s+$", "")
    end
    return {
      system = "You write concise release notes for version " .. args.version .. ".",
      messages = {
        { role = "user", content = "Cover these areas:\n" .. table.concat(areas, "\n") },
      },
    }
  end,
}
