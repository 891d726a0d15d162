"""ferry in a Django project (``pip install ferry[django]``; docs/integrations.md).

Add ``"ferry.contrib.django"`` to ``INSTALLED_APPS``. At start-up its app config builds the
Postgres driver on the project's database (``settings.FERRY``), finds the ``jobs.py`` and
``tasks.py`` modules of every installed app and names their jobs and tasks the way
``define_api`` does, and makes Django's own connection the one sync enqueues join:
``send_receipt.enqueue_sync(...)`` inside ``transaction.atomic()`` commits with it (no
``transaction.on_commit`` needed) and rolls back with it. ``manage.py ferry worker |
scheduler | dev | migrate | ...`` runs the ferry CLI on that database and those jobs.
"""

from ferry._extras import require_extra

require_extra("django", feature="ferry.contrib.django")

from ferry.contrib.django.apps import api, driver  # noqa: E402  (asked for above)

__all__ = ["api", "driver"]
