-- Take one of p.limit slots of key p.key for p.holder until p['until'] (p.now is now); a
-- row when it holds one. Check and take are one script: no two acquirers ever both see a
-- free slot, so nothing is ever contended.
local p = params()
if not slot_take(p.key, p.holder, p.limit, int(p.now), int(p['until'])) then return {} end
return rows({{acquired = true}})
