-- The database server's wall clock in epoch ms (`ferry doctor` compares it with ours).
SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint
