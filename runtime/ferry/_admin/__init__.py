"""The jobs dashboard (``/admin/jobs``) and what it shares with the CLI."""

from ferry._admin.access import Access
from ferry._admin.app import admin_app

__all__ = ["Access", "admin_app"]
