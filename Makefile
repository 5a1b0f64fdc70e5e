# scale-preview Makefile. `make test` is the command CI runs (see README).
GO ?= go
BIN := bin/kubectl-scale_preview
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo none)
LDFLAGS := -X github.com/scale-preview/scale-preview/pkg/version.Version=$(VERSION) -X github.com/scale-preview/scale-preview/pkg/version.Commit=$(COMMIT)

.PHONY: build test unit conformance e2e demo lint bench

build:
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/kubectl-scale_preview

unit:
	$(GO) test ./...

lint:
	@test -z "$$(gofmt -l cmd pkg test)" || (gofmt -l cmd pkg test; exit 1)
	$(GO) vet ./...
	cd test && $(GO) vet ./...
