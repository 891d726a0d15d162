-- Give back holder p.holder's slot of key p.key (a no-op when it holds none).
local p = params()
slot_drop(p.key, p.holder)
return {}
