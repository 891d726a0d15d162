-- Stop claims from queue $1 (paused at $2) until it is resumed.
INSERT INTO {schema}.paused_queues (queue, paused_at_ms) VALUES ($1, $2)
ON CONFLICT (queue) DO NOTHING
