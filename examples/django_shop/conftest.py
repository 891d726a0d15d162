"""ferry's Django test helper: the ``ferry`` fixture (a harness on the test database)."""

pytest_plugins = ["ferry.contrib.django.testing"]
