"""Numbered migrations, ``NNNN_name.sql``, applied in order and recorded in ``ferry_migrations``."""
