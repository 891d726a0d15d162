"""Framework integrations, each behind its extra: ``ferry.contrib.django`` (``ferry[django]``)
and ``ferry.contrib.fastapi`` (FastAPI and Starlette). ``import ferry`` loads none of them."""
