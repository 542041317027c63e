# memctl: common tasks. `make help` lists them.
GO       ?= go
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X github.com/memctl/memctl/cmd.Version=$(VERSION)
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: help build install test test-short e2e lint fmt bench fuzz soak demo clean

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-11s %s\n", $$1, $$2}'

build: ## build ./memctl
	$(GO) build -ldflags "$(LDFLAGS)" -o memctl .

install: ## install memctl into GOBIN
	$(GO) install -ldflags "$(LDFLAGS)" .

# A binary built with -race sleeps 1 s at exit (GORACE atexit_sleep_ms)
# to catch late reports; the scenarios start memctl thousands of times.
# Race reports still fail the run: they are printed before that sleep.
RACE_ENV := GORACE="atexit_sleep_ms=0 $(GORACE)"

test: ## the full suite: unit, fuzz seeds, end-to-end scenarios, race detector (on every package test and on the scenarios whose commands run goroutines; minutes on 2 cores)
	$(RACE_ENV) $(GO) test -race -count=1 -timeout 20m ./...

test-short: ## quick tests only (no end-to-end, crash or stress tests)
	$(GO) test -short -count=1 ./...

e2e: ## the real Claude Code (npm registry) with memctl's hooks and MCP server, against a fake model on 127.0.0.1
	./testdata/e2e/run.sh

lint: ## gofmt, go vet, staticcheck, builds for darwin, windows and freebsd
	for os in darwin windows freebsd; do GOOS=$$os $(GO) build ./... || exit 1; done
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

fmt: ## gofmt all Go files
	gofmt -w $$(git ls-files '*.go')

bench: build ## Go benchmarks and whole-process bench scripts, then the scale results page at 30k and 300k entries (SIZES="30000 300000 1000000" for 1M; figures for BENCHMARKS.md)
	$(GO) test -run '^$$' -bench . -benchmem -count=1 ./...
	./testdata/bench/process.sh ./memctl
	./testdata/bench/scale.sh ./memctl

FUZZTIME ?= 30s
fuzz: ## run each fuzz target for FUZZTIME (default 30s)
	$(GO) test -run '^$$' -fuzz '^FuzzParseDoc$$' -fuzztime $(FUZZTIME) ./mdmem
	$(GO) test -run '^$$' -fuzz '^FuzzEdit$$' -fuzztime $(FUZZTIME) ./mdmem
	$(GO) test -run '^$$' -fuzz '^FuzzFastPath$$' -fuzztime $(FUZZTIME) ./mdmem
	$(GO) test -run '^$$' -fuzz '^FuzzParseAnswer$$' -fuzztime $(FUZZTIME) ./consolidate

SIM_SEED  ?= 1000
SIM_SEEDS ?= 200
SIM_STEPS ?= 500
SIM_KINDS ?= all
SIM_LLM   ?= all
SIM_KNOWN ?= all
REPLICA_SEED  ?= 1
REPLICA_SEEDS ?= 50
REPLICA_STEPS ?= 200
REPLICA_N     ?= 3
soak: ## write-path simulation, 200 seeds × 500 steps by default (hours): SIM_SEED, SIM_SEEDS, SIM_STEPS, SIM_KINDS, SIM_LLM, SIM_KNOWN
	$(GO) test -count=1 -timeout 0 -run '^TestSimulation$$' . -sim.seed=$(SIM_SEED) -sim.seeds=$(SIM_SEEDS) \
		-sim.steps=$(SIM_STEPS) -sim.kinds=$(SIM_KINDS) -sim.llm=$(SIM_LLM) -sim.known=$(SIM_KNOWN) -v

soak-sync: ## replica simulation: a bare remote and REPLICA_N clones, REPLICA_SEEDS × REPLICA_STEPS steps (hours): REPLICA_SEED
	$(GO) test -count=1 -timeout 0 -run '^TestReplicaSimulation$$' . -replica.seed=$(REPLICA_SEED) -replica.seeds=$(REPLICA_SEEDS) \
		-replica.steps=$(REPLICA_STEPS) -replica.n=$(REPLICA_N) -v

demo: build ## build memctl and run it on a temporary memory
	./testdata/bench/demo.sh ./memctl

clean: ## remove build output
	rm -f memctl
