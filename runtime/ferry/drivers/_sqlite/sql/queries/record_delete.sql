-- Forget record (:space, :key).
DELETE FROM ferry_records WHERE space = :space AND key = :key
