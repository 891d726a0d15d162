--! include runs
-- Settle a batch of attempts, fenced on each claimer: see `settle` in runs.lua.
return settle(reader(ARGV))
