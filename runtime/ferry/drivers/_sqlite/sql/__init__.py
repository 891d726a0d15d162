"""The SQLite driver's SQL: named queries and numbered migrations, as plain ``.sql`` files."""
