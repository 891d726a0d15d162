# The ferry runtime image: one image for every role and for the operator.
#
#   docker build -t ghcr.io/acme/shop:1.2.3 .        # your app copied in below /app
#   docker run -e ROLE=worker -e FERRY_APP=myapp.jobs:api -e DATABASE_URL=... <image>
#
# `ferry run` picks the role from ROLE (worker | scheduler | relay); the operator sets ROLE,
# FERRY_APP, DATABASE_URL, METRICS_PORT and the rest on each Deployment it writes. The
# operator Deployment in charts/ferry runs `kopf run -m ferry_operator.handlers` from it.
#
# BASE is any image with Python 3.11+ and pip on the PATH (`--build-arg BASE=...` where the
# public registry is out of reach; scripts/node.sh builds on a Debian image it makes).
ARG BASE=python:3.11-slim
FROM ${BASE}

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
COPY pyproject.toml ./
# The dependencies in a layer of their own, read off pyproject.toml: editing ferry's code
# rebuilds from the next layer on and does not download them again. The image's roles are
# the worker, scheduler and relay (`ferry run`, on any durable DATABASE_URL: redis://
# included, with spans when the app installs an OpenTelemetry SDK) and the operator: the
# core plus the redis, otel and operator extras, and uvloop (every role runs on it;
# FERRY_EVENT_LOOP=asyncio turns it off).
ARG EXTRAS="redis otel operator uvloop"
RUN python -c "import sys, tomllib; p = tomllib.load(open('pyproject.toml', 'rb'))['project']; \
print('\n'.join(p['dependencies'] + [r for e in sys.argv[1:] for r in p['optional-dependencies'][e]]))" \
    $EXTRAS >/tmp/requirements.txt \
    && pip install -r /tmp/requirements.txt && rm /tmp/requirements.txt
COPY README.md ./
COPY runtime ./runtime
COPY operator ./operator
RUN pip install --no-deps .

# Your application code; FERRY_APP names its Api (module:attribute) relative to /app.
COPY examples ./examples

# A fixed numeric non-root user: the pods' runAsNonRoot/runAsUser (10001) match it.
RUN groupadd --gid 10001 ferry && useradd --uid 10001 --gid 10001 --no-create-home ferry
USER 10001:10001

EXPOSE 9090
ENTRYPOINT ["ferry"]
CMD ["run"]
