# Every target sets itself up: a fresh clone needs only python3 (3.11+) and make.
VENV  ?= .venv
PY    := $(VENV)/bin/python
STAMP := $(VENV)/.installed-dev

.PHONY: install test test-assets lint dev typecheck demo bench clean envtest node prometheus chart-crds

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev,operator]'
	touch $(STAMP)

install: $(STAMP)

## The whole test suite, lint and types included (what CI runs), on asyncio's own event
## loop; then the conformance and worker suites again on uvloop (FERRY_EVENT_LOOP=uvloop
## runs any part of the suite on it).
## The first run also provisions what the browser, Redis and Kubernetes tests need: Debian's
## Chromium and redis-server, the control-plane binaries, Prometheus, and a Kubernetes node
## with the image built from this checkout (built once, cached outside the repo; the image
## again when the code changed).
test: install lint test-assets
	$(PY) -m pytest -q
	FERRY_EVENT_LOOP=uvloop $(PY) -m pytest -q tests/conformance tests/integration/worker

test-assets:
	bash scripts/install-browser.sh
	bash scripts/install-redis.sh
	$(MAKE) envtest
	$(MAKE) prometheus
	$(MAKE) node

lint: install
	$(VENV)/bin/ruff check runtime operator tests examples bench
	$(VENV)/bin/ruff format --check runtime operator
	$(VENV)/bin/mypy --strict runtime/ferry examples
	MYPYPATH=examples/django_shop $(VENV)/bin/mypy --strict --explicit-package-bases \
		$$(find examples/django_shop -name '*.py')
	MYPYPATH=examples/fastapi_app:examples/fastapi_app/tests $(VENV)/bin/mypy --strict \
		--explicit-package-bases $$(find examples/fastapi_app -name '*.py')
	$(VENV)/bin/mypy --strict operator/ferry_operator
	$(VENV)/bin/lint-imports --no-cache

## The demo app on DATABASE_URL, or on the embedded PostgreSQL when it is unset.
demo: install
	$(PY) -m examples.demo

## The demo app live: worker + scheduler + dashboard in one process (Ctrl-C drains it).
dev: install
	$(PY) -m ferry dev --app examples.demo.app:api

## Benchmarks against peers; prints a table, never gates anything.
bench: install
	$(PY) -m pip install -q -e '.[dev,bench]'
	$(PY) -m bench

## kube-apiserver, kube-controller-manager, etcd (built once, cached outside the repo) + helm, kubectl.
envtest:
	scripts/envtest.sh
	scripts/kubetools.sh

## prometheus + promtool for the alert tests (built once, cached outside the repo).
prometheus:
	scripts/prometheus.sh

## kubelet, kube-scheduler, kube-proxy, the pause and runtime images, for tests/node. Needs
## root (apt-get, dockerd, and later containerd and the kubelet); elsewhere tests/node skips.
node:
	@if [ "$$(id -u)" -eq 0 ]; then scripts/node.sh; \
	else echo "make node: needs root; the tests in tests/node will skip"; fi

## The chart's CRD templates are rendered from crds/ here, never edited by hand.
chart-crds: install
	$(PY) scripts/chart_crds.py

clean:
	rm -rf $(VENV) .ferry build *.egg-info
