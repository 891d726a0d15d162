-- The runs already holding the keys of moved runs transfer_import skipped ($1..$5:
-- parallel arrays of key, name, queue, payload, created_at_ms), and whether each is the
-- same run: equal in every field a run never changes after its enqueue, and not itself
-- `moving` off this store (then the two "stores" are one, or it is mid-drain elsewhere).
SELECT r.idempotency_key, j.id::text AS id,
       j.state <> 'moving'
       AND j.name = r.name AND j.queue = r.queue AND j.created_at_ms = r.created_at_ms
       AND j.payload = r.payload::jsonb AS same
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[])
     AS r(idempotency_key, name, queue, payload, created_at_ms)
JOIN {schema}.jobs AS j ON j.idempotency_key = r.idempotency_key
