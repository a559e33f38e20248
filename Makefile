# yutenv: the two commands a newcomer needs are `make demo` and `make test`.
GO      ?= go
PYTHON  ?= python3
BIN     := bin/yutenv
VENV    := .venv
PY      := $(VENV)/bin/python
GOBIN   := $(CURDIR)/bin
STATICCHECK := $(GOBIN)/staticcheck
BENCHSTAT   := $(GOBIN)/benchstat
# The Python linter and formatter, pinned, in the venv (its settings: python/pyproject.toml).
RUFF_VERSION := 0.17.6
RUFF         := $(VENV)/bin/ruff

.DEFAULT_GOAL := build
include python/Makefile.inc

.PHONY: demo build test test-deps go-test py-test lint tools ruff bench bench-compare clean wheels docs docs-serve

# The main job: the package (with the server built inside it) plays and evaluates real games.
# The demo needs none of the trainer extras (torch, Ray, ...): it installs the package alone.
demo:
	$(MAKE) --no-print-directory py-install PY_EXTRAS=
	$(PY) -m yutenv.tools.demo

build:
	$(GO) build -o $(BIN) ./cmd/yutenv

$(STATICCHECK):
	GOBIN=$(GOBIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@v0.8.2

$(BENCHSTAT):
	GOBIN=$(GOBIN) $(GO) install golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da

# Included after UV_STAMP (python/Makefile.inc): the venv and uv first, then ruff at the pinned version.
RUFF_STAMP := $(VENV)/.yutenv-ruff-$(RUFF_VERSION)
$(RUFF_STAMP): $(UV_STAMP)
	$(UV) pip install -q --python $(PY) 'ruff==$(RUFF_VERSION)'
	touch $@

ruff: $(RUFF_STAMP)

tools: $(STATICCHECK) $(BENCHSTAT) $(RUFF_STAMP)

# Interleaved before/after benchmarks of two revisions: make bench-compare OLD=main NEW=HEAD
# (docs/BENCHMARKS.md, "Comparing two revisions").
bench-compare: $(BENCHSTAT)
	scripts/bench-compare.sh $(or $(OLD),main) $(or $(NEW),HEAD)

# What lint runs: staticcheck and ruff (benchstat, a tool of bench-compare only, is not built).
lint: $(STATICCHECK) $(RUFF_STAMP)
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...
	$(RUFF) check python
	$(RUFF) format --check python

# Every package twice. Under the race detector the tests check concurrency: those whose point is
# scale in one goroutine (property games, solving every variant, whole-command runs, the arm64
# games) trim or skip there (internal/israce). Without it, every test runs at full size.
go-test:
	$(GO) test -race -count=1 ./...
	$(GO) test -count=1 ./...

# Chromium (the replay viewer's browser test), qemu-user-static (the aarch64 wheel, the arm64
# games of cmd/yutenv/xarch_test.go) and file:
# without root their tests are skipped, unless YUTENV_REQUIRE_TOOLS=1 (as CI sets).
test-deps:
	@bash scripts/install-test-tools.sh || [ -z "$$YUTENV_REQUIRE_TOOLS" ]

# Everything at once, in lanes that share the cores: the main Python suite (the longest: its venv
# first), the Go lane (lint, then the Go tests twice), RLlib's venv and run, then the TCP
# transport's run, the lowest versions' and the offline extra's venvs and runs, and the
# documentation site (docs-lane). Much of the Python suite's time is spent waiting (servers, Ray, the
# trainers' processes starting), which the other lanes fill. The venv and ruff come first, since
# every lane uses the venv; Debian's test tools are installed once, before the tests that drive
# them.
test: $(RUFF_STAMP)
	+$(MAKE) --no-print-directory -j3 --output-sync=line py-test-main go-lane rllib-lane py-test-tcp lowest-lane docs-lane

.PHONY: go-lane rllib-lane lowest-lane docs-lane
go-lane: lint test-deps
	+$(MAKE) --no-print-directory go-test

# The documentation site built strict, then tested: in headless Chromium (its pages and its
# search, internal/docsite) and against the package (every public name in the API reference,
# python/tests/test_api_reference.py). After the main venv's install, which has the docs extra.
# The build is the docs target's recipe, not a sub-make: a sub-make would list the package's
# sources again (py-install's source list) while RLlib's lane does the same.
docs-lane: py-install test-deps
	$(MKDOCS_BUILD)
	YUTENV_DOCS_SITE=$(CURDIR)/$(SITE) $(GO) test -count=1 ./internal/docsite/
	YUTENV_DOCS_SITE=$(CURDIR)/$(SITE) $(VENV)/bin/pytest -q python/tests/test_api_reference.py

# After the main venv's install: both package builds write python/build/.
rllib-lane: py-install
	+$(MAKE) --no-print-directory py-test-rllib

# After the main venv's install, for the same reason; one venv's build at a time.
lowest-lane: py-install
	+$(MAKE) --no-print-directory py-test-lowest py-test-offline

# The documentation site (mkdocs.yml): the guides of docs/, README.md as the home page, and the API
# reference (docs/api/) rendered from the package's docstrings, built into $(SITE) in strict mode:
# a broken link, anchor or cross-reference, or a docstring the reference cannot render, fails the
# build. The tools are the docs extra of python/pyproject.toml (pinned), in the main venv; the
# package's source is read, not imported. `make docs-serve` previews it on 127.0.0.1:8000 and
# rebuilds on every change (docs/DEVELOPING.md, "The documentation site").
SITE := site
# Material for MkDocs prints a notice about MkDocs 2.0 at every build; the pins above stay on 1.x.
export NO_MKDOCS_2_WARNING := 1

MKDOCS_BUILD = $(VENV)/bin/mkdocs build --strict --clean --site-dir $(SITE)

docs: py-install $(RUFF_STAMP)
	$(MKDOCS_BUILD)

docs-serve: py-install $(RUFF_STAMP)
	$(VENV)/bin/mkdocs serve --strict --dev-addr 127.0.0.1:8000

bench: build
	$(GO) test -run '^$$' -bench . -benchmem ./env/...
	$(BIN) bench

clean:
	rm -rf bin $(VENV) $(RLLIB_VENV) $(LOWEST_VENV) $(OFFLINE_VENV) $(SITE)

# Wheels of every platform (Go cross-compiles the server; python/hatch_build.py tags each
# wheel) and the sdist, into $(DIST); then `twine check` of all and `auditwheel show` of the
# Linux ones. Needs Go, not the platforms themselves. Tested by python/tests/test_wheels.py.
WHEEL_TARGETS ?= linux-amd64 linux-arm64 darwin-amd64 darwin-arm64 windows-amd64
DIST          ?= dist
WHEEL_TOOLS   := $(VENV)/.yutenv-wheel-tools

$(WHEEL_TOOLS): $(UV_STAMP)
	$(UV) pip install -q --python $(PY) 'twine>=5' 'auditwheel>=6'
	touch $@

wheels: $(WHEEL_TOOLS)
	rm -rf $(DIST) && mkdir -p $(DIST)
	for t in $(WHEEL_TARGETS); do \
		YUTENV_TARGET=$$t $(PY) -m pip wheel -q --no-deps --no-build-isolation -w $(DIST) ./python || exit 1; \
	done
	cd python && $(abspath $(PY)) -m hatchling build -t sdist -d $(abspath $(DIST))
	$(PY) -m twine check --strict $(DIST)/*
	for w in $(DIST)/*linux*.whl; do $(PY) -m auditwheel show $$w || exit 1; done
