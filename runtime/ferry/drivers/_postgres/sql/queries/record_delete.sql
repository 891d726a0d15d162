-- Forget record ($1, $2).
DELETE FROM {schema}.records WHERE space = $1 AND key = $2
