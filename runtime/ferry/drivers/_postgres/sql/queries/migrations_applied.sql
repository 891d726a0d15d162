-- Versions already applied to this schema.
SELECT version FROM {schema}.migrations
