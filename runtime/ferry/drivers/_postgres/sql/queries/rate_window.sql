-- One key's rate window (ferry.drivers.rates): its starts and bookings.
SELECT starts, booked FROM {schema}.rate_windows WHERE key = $1
