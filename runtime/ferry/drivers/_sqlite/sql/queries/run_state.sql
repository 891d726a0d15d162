-- Run :id's name and state, read under the write lock before an operator's action.
SELECT name, state FROM ferry_jobs WHERE id = :id
