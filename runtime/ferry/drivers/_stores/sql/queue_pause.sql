-- Stop claims from queue :queue (paused at :now) until it is resumed.
INSERT INTO {schema}.paused_queues (queue, paused_at_ms) VALUES (:queue, :now)
ON CONFLICT (queue) DO NOTHING
