# scale-preview Makefile. `make test` is the command CI runs (see README).
GO ?= go
BIN := bin/kubectl-scale_preview
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo none)
LDFLAGS := -X github.com/scale-preview/scale-preview/pkg/version.Version=$(VERSION) -X github.com/scale-preview/scale-preview/pkg/version.Commit=$(COMMIT)

.PHONY: build test unit conformance e2e e2e-short demo lint bench

# The whole suite, as CI runs it: unit and CLI tests, conformance against the
# real Kubernetes controller code, the real control-plane end-to-end suite,
# and the packaging test (goreleaser archives installed the way krew does).
test: lint unit conformance e2e packaging-test

build:
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/kubectl-scale_preview

unit:
	$(GO) test ./...

# Checks the engine against k8s.io/kubernetes' own ActivePodsWithRanks.
conformance:
	cd test && $(GO) test -count=1 -v ./conformance/

# Starts etcd, kube-apiserver and kube-controller-manager (built from the Go
# module proxy) on loopback and compares predictions with real scale-ins.
e2e:
	cd test && $(GO) test -count=1 -v -timeout 80m ./e2e/

e2e-short:
	cd test && $(GO) test -count=1 -v -short -timeout 40m ./e2e/

# A prediction from the shipped offline example; no cluster needed.
demo:
	$(GO) run ./cmd/kubectl-scale_preview -f examples/web.yaml deploy/web --replicas=3 -n shop --now 2025-01-01T12:00:00Z

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./pkg/engine/

lint:
	@test -z "$$(gofmt -l cmd pkg test)" || (gofmt -l cmd pkg test; exit 1)
	$(GO) vet ./...
	cd test && $(GO) vet ./...

# --- release (packaging) ---
# goreleaser is built from the Go module proxy into a repo-local tools dir.
# Pinned: v2.16.0 is the newest that builds with Go 1.26 (v2.18 needs Go 1.27).
GORELEASER_VERSION ?= v2.16.0
TOOLS_BIN := $(CURDIR)/bin/tools
GORELEASER := $(TOOLS_BIN)/goreleaser

.PHONY: tools release-snapshot packaging-test

tools: $(GORELEASER)

$(GORELEASER):
	@mkdir -p $(TOOLS_BIN)
	GOBIN=$(TOOLS_BIN) CGO_ENABLED=0 $(GO) install github.com/goreleaser/goreleaser/v2@$(GORELEASER_VERSION)

# Builds every archive of .goreleaser.yaml into dist/ (no publishing).
release-snapshot: $(GORELEASER)
	$(GORELEASER) release --snapshot --clean

# Builds the archives (unless PACKAGING_DIST names an existing dist/), checks
# the krew manifest and installs/runs the plugin through kubectl.
packaging-test:
	cd test && $(GO) test -count=1 -v -timeout 40m ./packaging/
