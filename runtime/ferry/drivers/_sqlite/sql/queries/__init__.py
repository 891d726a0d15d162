"""Named queries: one statement per file, called by the file's name."""
