"""The shared fixtures of every suite live in ``tests/support`` (see ``support.plugin``)."""

pytest_plugins = ["support.plugin"]
