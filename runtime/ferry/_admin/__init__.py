"""The jobs dashboard (``/admin/jobs``): pages over the operations layer.

Starlette, uvicorn, Jinja2 and python-multipart come with ``ferry[dashboard]``.
"""

from ferry._admin.app import admin_app
from ferry._operations.access import Access

__all__ = ["Access", "admin_app"]
