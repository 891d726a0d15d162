-- Mark run :id as awaiting its children (step.wait, just before it parks; its holder was
-- checked under the write lock): the park that follows ends at once when no child is
-- pending, and the last child to end wakes it (ferry.drivers.fan_in).
UPDATE ferry_jobs SET awaiting_children = 1 WHERE id = :id
