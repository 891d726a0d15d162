--! include runs
-- Lease up to `limit` due runs, counting an attempt: see `claim` in runs.lua.
return claim(reader(ARGV))
