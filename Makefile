# outboxctl: `make help` lists the targets.
SHELL := /bin/bash
export PATH := $(PATH):/usr/local/go/bin:$(shell go env GOPATH 2>/dev/null)/bin

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS := -s -w -X github.com/outboxctl/outboxctl/cmd.version=$(VERSION) -X github.com/outboxctl/outboxctl/cmd.commit=$(COMMIT)
BIN     := bin/outboxctl
STATICCHECK_VERSION := v0.8.2
GOLANGCI_LINT_VERSION := v2.15.0
# Where make demo puts its data set: never the real tables.
DEMO_SCHEMA ?= outboxctl_demo
DEMO_DSN    ?= $(or $(OUTBOXCTL_DSN),postgres://postgres@127.0.0.1:5432/test?sslmode=disable)

.PHONY: help build test test/race lint golden docs verify bench fuzz demo clean install

help: ## Show this help
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z\/_-]+:.*## / {printf "  \033[1m%-12s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

# CGO_ENABLED=0: a static binary starts about 1 ms sooner (no dynamic loader, no libc) and
# runs on any Linux; nothing in outboxctl needs cgo (the race detector, for tests, does).
build: ## Build bin/outboxctl with version and commit (static)
	CGO_ENABLED=0 go build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) .

install: ## Install outboxctl into $(go env GOPATH)/bin (static)
	CGO_ENABLED=0 go install -trimpath -ldflags '$(LDFLAGS)' .

test: ## Run every test (unit, golden, real PostgreSQL/Redis, end-to-end scripts, fuzz seeds)
	go test ./... -count=1 -timeout 10m

test/race: ## Run the tests with the race detector
	go test ./... -count=1 -race -timeout 15m

lint: ## go vet, gofmt, staticcheck and golangci-lint (.golangci.yml: the architecture's import rules)
	go vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	@command -v staticcheck >/dev/null || GOFLAGS= go install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	staticcheck ./...
	@command -v golangci-lint >/dev/null || GOFLAGS= go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	golangci-lint run ./...

docs: ## Regenerate docs/reference from the command tree
	go test ./cmd -run TestReferenceDocsUpToDate -update-docs -count=1

golden: ## Rewrite the golden SQL files after an intended change (review the diff!)
	go test ./internal/query -run TestGolden -update -count=1

verify: ## Fail if the goldens, docs, go.mod or formatting are not up to date
	go test ./internal/query -run TestGolden -update -count=1
	go test ./cmd -run TestReferenceDocsUpToDate -update-docs -count=1
	go mod tidy
	gofmt -w $$(git ls-files '*.go')
	git diff --exit-code

bench: build ## Run the benchmarks (see docs/performance.md; builds an OUTBOXCTL_BENCH_ROWS-row data set once, default 2M, ~10 min; 20M in its own schema)
	OUTBOXCTL_BIN=$(CURDIR)/$(BIN) go test ./cmd -run '^$$' -bench Startup -benchtime 200x -count 1
	go test ./internal/query -run '^$$' -bench . -benchtime 20x -count 1 -timeout 30m
	OUTBOXCTL_BIN=$(CURDIR)/$(BIN) go test ./cmd -run '^$$' -bench ReadCommands -benchtime 10x -count 1 -timeout 30m
	OUTBOXCTL_BIN=$(CURDIR)/$(BIN) go test ./cmd -run '^$$' -bench InspectAllStreams -benchtime 2x -count 1 -timeout 30m
	go test ./internal/drain -run '^$$' -bench DrainModes -benchtime 1x -count 1 -timeout 30m
	go test ./cmd -run '^$$' -bench DrainEndToEnd -benchtime 1x -count 1 -timeout 30m
	go test ./cmd -run '^$$' -bench Handlers -benchtime 1x -count 1 -timeout 30m
	go test ./cmd -run '^$$' -bench KillswitchList100k -benchtime 3x -count 1 -timeout 10m
	OUTBOXCTL_BIN=$(CURDIR)/$(BIN) go test ./cmd -run '^$$' -bench DatabaseCommand -benchtime 20x -count 1 -timeout 10m

fuzz: ## Fuzz every parser and renderer for 30 s each; drain 2,000 more random shards against the model
	go test ./internal/drain -run TestDrainMatchesSentryModel -count=1 -timeout 60m -diff.cases=2000 -diff.seed=$$(date +%s)
	go test ./internal/enums -run '^$$' -fuzz FuzzResolve -fuzztime 30s
	go test ./internal/query -run '^$$' -fuzz FuzzLiteral -fuzztime 30s
	go test ./internal/drain -run '^$$' -fuzz FuzzParseArchive -fuzztime 30s
	go test ./internal/options -run '^$$' -fuzz FuzzDecode -fuzztime 30s
	go test ./internal/backfill -run '^$$' -fuzz FuzzParseRedisCursor -fuzztime 30s
	go test ./internal/query -run '^$$' -fuzz FuzzBlockComment -fuzztime 30s
	go test ./internal/query -run '^$$' -fuzz FuzzLineComment -fuzztime 30s
	go test ./internal/query -run '^$$' -fuzz FuzzIdent -fuzztime 30s
	go test ./internal/render -run '^$$' -fuzz FuzzEscape -fuzztime 30s

demo: build ## Print the stuck-shard SQL; when PostgreSQL is reachable, seed a demo schema and run it
	@echo "== outboxctl shards --stuck --print-sql (no database needed)"
	@$(BIN) shards --stuck --print-sql
	@if $(BIN) --dsn '$(DEMO_DSN)' --connect-timeout 2s depth --table pg_class >/dev/null 2>&1 || pg_isready -q -d '$(DEMO_DSN)' 2>/dev/null; then \
		echo "== seeding schema $(DEMO_SCHEMA) (outboxctl demo seed)"; \
		$(BIN) --dsn '$(DEMO_DSN)' demo seed --schema $(DEMO_SCHEMA) --rows 20000 --yes && \
		echo "== outboxctl shards --stuck (run against the demo schema)" && \
		$(BIN) --dsn '$(DEMO_DSN)' --schema $(DEMO_SCHEMA) shards --stuck; \
	else echo "(PostgreSQL at $(DEMO_DSN) is not reachable: set OUTBOXCTL_DSN to run the SQL)"; fi

clean: ## Remove build output
	rm -rf bin
