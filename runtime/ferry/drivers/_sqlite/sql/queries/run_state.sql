-- Run :id's name, state and parent, read under the write lock before an operator's action.
SELECT id, name, state, parent_id FROM ferry_jobs WHERE id = :id
