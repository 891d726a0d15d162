-- Take the retiring partition ready_{part} for its truncation (ready_retire): no claim or
-- write reads it meanwhile. The wait is bounded by a 10 ms lock_timeout, for this
-- transaction only: enough for the claims in flight to end, and claims arriving meanwhile
-- queue at most that long. A transaction that read the ready set holds the partition until
-- it ends; the lock then times out and the caller tries again at its next turn — claims
-- never queue behind a TRUNCATE waiting for such a transaction.
SET LOCAL lock_timeout = '10ms';
LOCK TABLE {schema}.ready_{part} IN ACCESS EXCLUSIVE MODE
