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
COPY pyproject.toml README.md ./
COPY runtime ./runtime
COPY operator ./operator
RUN pip install '.[operator]'

# Your application code; FERRY_APP names its Api (module:attribute) relative to /app.
COPY examples ./examples

# A fixed numeric non-root user: the pods' runAsNonRoot/runAsUser (10001) match it.
RUN groupadd --gid 10001 ferry && useradd --uid 10001 --gid 10001 --no-create-home ferry
USER 10001:10001

EXPOSE 9090
ENTRYPOINT ["ferry"]
CMD ["run"]
