"""The jobs dashboard as an ASGI app, to mount in a web application of your own.

It needs ``ferry[dashboard]`` (Starlette, uvicorn, Jinja2, python-multipart): importing
this module without it is refused with ``X_EXTRA_MISSING``.
"""

from ferry._extras import require_extra

require_extra("dashboard", feature="ferry.admin (the jobs dashboard)")

from ferry._admin import Access, admin_app  # noqa: E402  (asked for above)

__all__ = ["Access", "admin_app"]
