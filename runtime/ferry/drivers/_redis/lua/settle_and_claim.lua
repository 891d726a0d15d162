--! include runs
-- A batch of settles, then a claim, in one script: the settles land first, so a slot they
-- release is claimable by the same call. ARGV holds settle's arguments, then claim's.
local arg = reader(ARGV)
local landed = settle(arg)
return {landed, claim(arg)}
