# The ferry runtime image: one image for every role and for the operator.
#
#   docker build -t ghcr.io/acme/shop:1.2.3 .        # your app copied in below /app
#   docker run -e ROLE=worker -e FERRY_APP=myapp.jobs:api -e DATABASE_URL=... <image>
#
# `ferry run` picks the role from ROLE (worker | scheduler | relay); the operator sets ROLE,
# FERRY_APP, DATABASE_URL, METRICS_PORT and the rest on each Deployment it writes. The
# operator Deployment in charts/ferry runs `python -m ferry_operator` from it.
#
# BASE is any image with Python 3.11+ whose `python3 -m venv` works (`--build-arg
# BASE=...` where the public registry is out of reach; scripts/node.sh builds on a Debian
# image it makes). Two stages: the first builds a virtualenv with pip, the second ships only
# that virtualenv — no pip, no build tools, no download cache — over a fresh BASE.
ARG BASE=python:3.11-slim

FROM ${BASE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
# strip, for the compiled extensions below: some wheels ship theirs with debug info (uvloop's
# is 13 MB of which 2 are code). This stage only: nothing of binutils is shipped.
RUN apt-get update -q && apt-get install -y -q --no-install-recommends binutils \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml ./
# The dependencies in a layer of their own, read off pyproject.toml: editing ferry's code
# rebuilds from the next layer on and does not download them again. The image's roles are
# the worker, scheduler and relay (`ferry run`, on any durable DATABASE_URL: redis://
# included, with spans when the app installs an OpenTelemetry SDK) and the operator: the
# core plus the redis, otel and operator extras, and uvloop (every role runs on it;
# FERRY_EVENT_LOOP=asyncio turns it off) — not the dashboard, the MCP server or the embedded
# PostgreSQL, which no pod role runs.
ARG EXTRAS="redis otel operator uvloop"
RUN python3 -m venv /opt/ferry \
    && python3 -c "import sys, tomllib; p = tomllib.load(open('pyproject.toml', 'rb'))['project']; \
print('\n'.join(p['dependencies'] + [r for e in sys.argv[1:] for r in p['optional-dependencies'][e]]))" \
    $EXTRAS >/tmp/requirements.txt \
    && /opt/ferry/bin/pip install -r /tmp/requirements.txt
COPY README.md ./
COPY runtime ./runtime
COPY operator ./operator
# ferry itself, then the installers out, the extensions stripped of their debug info, and
# every module compiled once (a pod's root filesystem is read-only, so nothing could be
# cached at run time): unchecked-hash .pyc are never compared with their sources, so an
# import costs no stat of them.
RUN /opt/ferry/bin/pip install --no-deps . \
    && /opt/ferry/bin/pip uninstall -y pip setuptools \
    && find /opt/ferry -name '*.so' -exec strip --strip-unneeded {} + \
    && python3 -m compileall -q -f -j 0 --invalidation-mode unchecked-hash /opt/ferry

FROM ${BASE}
ENV PATH=/opt/ferry/bin:$PATH \
    VIRTUAL_ENV=/opt/ferry \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
COPY --from=build /opt/ferry /opt/ferry

# Your application code; FERRY_APP names its Api (module:attribute) relative to /app.
WORKDIR /app
COPY examples ./examples
RUN python3 -m compileall -q -j 0 --invalidation-mode unchecked-hash /app \
    && groupadd --gid 10001 ferry && useradd --uid 10001 --gid 10001 --no-create-home ferry
# A fixed numeric non-root user: the pods' runAsNonRoot/runAsUser (10001) match it.
USER 10001:10001

EXPOSE 9090
ENTRYPOINT ["ferry"]
CMD ["run"]
