"""The jobs dashboard as an ASGI app, to mount in a web application of your own."""

from ferry._admin import Access, admin_app

__all__ = ["Access", "admin_app"]
