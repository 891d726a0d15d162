-- One key's rate window (ferry.drivers.rates): its starts and bookings as JSON arrays.
SELECT to_json(starts)::text AS starts, to_json(booked)::text AS booked
FROM {schema}.rate_windows WHERE key = :key
