-- :holder takes a slot of :key until :until if the key has fewer than :limit live holders
-- at :now, or extends the one it holds (re-acquiring is idempotent). Counting every live
-- holder, not only those under the limit, keeps a lowered limit. The count and the write
-- are one statement under the file's write lock, so nothing is ever contended.
INSERT INTO ferry_lease_slots (key, holder, expires_at_ms)
SELECT :key, :holder, :until
WHERE EXISTS (
        SELECT 1 FROM ferry_lease_slots
        WHERE key = :key AND holder = :holder AND expires_at_ms > :now)
   OR (SELECT count(*) FROM ferry_lease_slots WHERE key = :key AND expires_at_ms > :now)
        < :limit
ON CONFLICT (key, holder) DO UPDATE SET expires_at_ms = excluded.expires_at_ms
RETURNING 1 AS acquired, 0 AS contended
