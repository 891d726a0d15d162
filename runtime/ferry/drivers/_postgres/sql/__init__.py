"""The Postgres driver's SQL: named queries and numbered migrations, as plain ``.sql`` files."""
