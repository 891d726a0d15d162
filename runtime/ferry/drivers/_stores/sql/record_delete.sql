-- Forget record (:space, :key).
DELETE FROM {schema}.records WHERE space = :space AND key = :key
