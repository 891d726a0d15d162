-- One key's rate window (ferry.drivers.rates): its starts and bookings as JSON arrays.
SELECT starts, booked FROM ferry_rate_windows WHERE key = :key
