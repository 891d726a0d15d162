-- Let claims from queue :queue proceed again.
DELETE FROM ferry_paused_queues WHERE queue = :queue
