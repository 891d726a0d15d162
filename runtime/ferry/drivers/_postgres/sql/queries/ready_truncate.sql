-- Free the retired partition ready_{part}, dead rows and all, whatever the xmin horizon:
-- what vacuum cannot do while a snapshot holds the horizon back. Runs in ready_retire's
-- transaction, under ready_lock.
TRUNCATE {schema}.ready_{part}
