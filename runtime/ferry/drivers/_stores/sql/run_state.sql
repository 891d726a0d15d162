-- Run :id's name and state: why an operator's action changed nothing.
SELECT name, state FROM {schema}.jobs WHERE id = :id
