-- Store JSON p.value under (p.space, p.key), expiring at p.expires_at_ms (absent: never),
-- at p.now — if the fence holds in this same script: lease p.lease_name (when given) still
-- held by p.lease_holder in term p.lease_term at p.now, and run p.run_id (when given) still
-- held by worker p.worker_id. Stored by lib.lua's record_store. A row when it landed.
local p = params()
if p.lease_name then
  local held = redis.call('HMGET', key('lease', p.lease_name), 'holder', 'term', 'expires')
  if held[1] ~= p.lease_holder or tonumber(held[2]) ~= p.lease_term
    or tonumber(held[3]) <= p.now then
    return {}
  end
end
if p.run_id and not holds(fields(int(p.run_id), {'state', 'locked_by', 'lease'}), p.worker_id, p.now) then
  return {}
end
record_store(p.space, p.key, p.value, p.expires_at_ms and int(p.expires_at_ms))
return rows({{landed = true}})
