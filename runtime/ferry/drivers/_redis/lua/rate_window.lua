-- Key p.key's rate window (ferry.drivers.rates): its starts and bookings, stored as
-- comma-separated lists (lib.lua's rate_take), answered as JSON arrays.
local p = params()
local stored = redis.call('HMGET', key('rate', p.key), 'starts', 'booked')
if not (stored[1] or stored[2]) then return {} end
return rows({{starts = '[' .. (stored[1] or '') .. ']', booked = '[' .. (stored[2] or '') .. ']'}})
