"""Settings of the example shop: one PostgreSQL database, named by DATABASE_URL."""

import os
from urllib.parse import parse_qs, unquote, urlparse

_url = urlparse(os.environ.get("DATABASE_URL", "postgresql://postgres@localhost/shop"))
_query = parse_qs(_url.query)

SECRET_KEY = "example-only"
DEBUG = True
ALLOWED_HOSTS = ["*"]
USE_TZ = True
ROOT_URLCONF = "shop_site.urls"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
INSTALLED_APPS = ["django.contrib.contenttypes", "shop", "ferry.contrib.django"]
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": _url.path.lstrip("/"),
        "USER": unquote(_url.username or ""),
        "PASSWORD": unquote(_url.password or ""),
        "HOST": _query.get("host", [_url.hostname or ""])[0],
        "PORT": str(_url.port or ""),
    }
}
FERRY = {"SCHEMA": os.environ.get("FERRY_SCHEMA", "ferry")}
