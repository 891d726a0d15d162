-- Tell result waiters that the runs of :ids ended (an operator's cancel): their ids on the
-- ended channel, comma-separated, at most 400 to a notification (as _settle_news.sql).
-- Part of the action's transaction, so delivered on its commit and never on rollback.
SELECT pg_notify({ended_channel}, string_agg(ended.id::text, ','))
FROM (SELECT id, (row_number() OVER ()) / 400 AS chunk
      FROM unnest(:ids::bigint[]) AS id) AS ended
GROUP BY ended.chunk
