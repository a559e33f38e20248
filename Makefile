# yutenv: the two commands a newcomer needs are `make demo` and `make test`.
GO      ?= go
PYTHON  ?= python3
BIN     := bin/yutenv
VENV    := .venv
PY      := $(VENV)/bin/python
GOBIN   := $(CURDIR)/bin
STATICCHECK := $(GOBIN)/staticcheck

.DEFAULT_GOAL := build
include python/Makefile.inc

.PHONY: demo build test test-deps go-test py-test lint tools bench clean

# The main job: the package (with the server built inside it) plays and evaluates real games.
# The demo needs none of the trainer extras (torch, Ray, ...): it installs the package alone.
demo:
	$(MAKE) --no-print-directory py-install PY_EXTRAS=
	$(PY) -m yutenv.demo

build:
	$(GO) build -o $(BIN) ./cmd/yutenv

$(STATICCHECK):
	GOBIN=$(GOBIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@v0.8.2

tools: $(STATICCHECK)

lint: tools
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...

# Once at full size (property tests trim themselves under -race), once under the race detector.
go-test:
	$(GO) test -count=1 ./...
	$(GO) test -race -count=1 ./...

# Chromium is only for the replay viewer's browser test; without root it is skipped
# unless YUTENV_REQUIRE_BROWSER=1 (as CI sets).
test-deps:
	@bash scripts/install-chromium.sh || [ -z "$$YUTENV_REQUIRE_BROWSER" ]

test: lint test-deps go-test py-test

bench: build
	$(GO) test -run '^$$' -bench . -benchmem ./env/...
	$(BIN) bench

clean:
	rm -rf bin $(VENV) $(RLLIB_VENV)
