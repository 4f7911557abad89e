# agentls — build, test and measure. `make test` runs every suite and says
# what it ran and what it skipped; with CI=true nothing may be skipped.

GO      ?= go
BIN     ?= bin/agentls
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)

.PHONY: all build vsix test test-go test-race bench bench-wire bench-graph fuzz demo clean

all: build

# A static binary (no libc): it starts faster, maps less and runs on any
# Linux of the same architecture.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/agentls

# The VS Code extension's platform packages, in dist/vscode:
# agentls-<target>-<version>.vsix for linux-x64, linux-arm64, darwin-x64,
# darwin-arm64 and win32-x64, each with agentls cross-compiled as above for
# its platform and the extension bundled. Needs Go, Node 20 and npm; runs
# npm ci in editors/vscode when its packages are missing.
vsix:
	@[ -d editors/vscode/node_modules ] || (cd editors/vscode && npm ci --include=dev --no-audit --no-fund)
	VERSION=$(VERSION) bash editors/vscode/scripts/package.sh $(CURDIR)/dist/vscode
	cd editors/vscode && VERSION=$(VERSION) VSIX_DIR=$(CURDIR)/dist/vscode node --test --test-reporter=spec test/package/

# Every suite: Go (vet, gofmt, tests, race), then each editor plugin in its
# real editor. scripts/test.sh prints the summary.
test:
	@bash scripts/test.sh

test-go:
	@bash scripts/test.sh go

test-race:
	$(GO) test -race -timeout 600s ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem -timeout 1200s ./...

# The transport figures of docs/BENCHMARKS.md: agentls against stock
# jsonrpc2 and vscode-jsonrpc echo servers, side by side, over stdio pipes.
bench-wire:
	@bash scripts/bench-wire.sh

# The code graph beside Universal Ctags on the Go standard library of this
# machine (docs/BENCHMARKS.md, Code graph): index time, memory, one file's
# update, the start from the stored graph; then the precision and recall of
# its Go references against a go/ast oracle. COPIES=10: the scale run, ten
# copies of the standard library under different roots.
bench-graph:
	@bash scripts/bench-graph.sh $(if $(COPIES),-copies $(COPIES))

# A few minutes of each fuzz target (FUZZTIME per target).
FUZZTIME ?= 60s
fuzz:
	@bash scripts/fuzz.sh $(FUZZTIME)

# The offline demo: agentls plans, edits, creates and tests a copy of
# examples/greeter with a scripted model. Needs Go, and the network on the
# first run (the Go module proxy); leaves the repository as it was and
# fails if the changed copy's tests fail.
demo:
	@bash scripts/demo.sh

# Everything the builds and the suites leave in the checkout: binaries, the
# VS Code packages (dist), the suites' caches (.cache/test: agentls,
# code-server, apt and npm logs), the VS Code extension's npm packages, bundle
# and build, the help tags Neovim builds.
clean:
	rm -rf bin dist .cache editors/vscode/node_modules editors/vscode/out editors/vscode/dist \
		editors/vscode/bin editors/vscode/*.vsix editors/nvim/doc/tags bench/wire/node/node_modules
