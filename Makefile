# hpcforge developer entry points. Everything runs from a local virtualenv (.venv).
# Exit codes: GNU make folds every failure into its own exit code 2 (0 on success; 1 only with -q), so a script
# cannot tell one failure from another through make. Scripts call ./hpcforge COMMAND, whose codes are documented
# (README.md, "The offline runner"); `make check` and `make diff` print on their last line which code it gave.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
HPCFORGE ?= ./hpcforge

.PHONY: install preview render check diff test test-fast lint docs docs-check bench-quick bench fuzz clean

$(STAMP): requirements.txt requirements-dev.txt requirements-nca.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-dev.txt
	$(PYTHON) -m venv $(VENV)/nca
	$(VENV)/nca/bin/python -m pip install --quiet -r requirements-nca.txt
	touch $(STAMP)

install: $(STAMP)

## Offline preview of the dev stack (no cluster, no Pulumi CLI needed).
preview: $(STAMP)
	./hpcforge preview --stack dev

## Write every object of a stack as YAML: make render STACK=prod OUT=out/prod
STACK ?= dev
OUT ?= out/$(STACK)
## Add the charts' rendered objects: make render CHART_FLAGS="--render-charts --charts-from DIR" (docs/charts.md)
CHART_FLAGS ?=
render: $(STAMP)
	./hpcforge render --stack $(STACK) --out $(OUT) $(CHART_FLAGS)

## Run every policy pack against a stack offline, over the gRPC Analyzer protocol; the policy
## configuration follows the stack's hpcforge:environmentKind. Any stack file: make check STACK_FILE=path
## PREVIEW=1: as `pulumi preview` of a new stack (outputs that providers compute are unknown).
## GNU make itself exits 2 whenever a recipe fails (its manual: 0, 2, or 1 only with -q); the recipe's
## last line says which code `./hpcforge check` gave (1 violation, 2 invalid config). Scripts that need
## the code itself run `./hpcforge check --stack STACK`, which is exactly this recipe's command.
STACK_FILE ?= Pulumi.$(STACK).yaml
PREVIEW ?=
check: $(STAMP)
	@rc=0; $(HPCFORGE) check --stack $(STACK) --config $(STACK_FILE) $(if $(PREVIEW),--preview) $(CHART_FLAGS) || rc=$$?; \
	case $$rc in 0) ;; 1) echo "make check: exit 1: a mandatory policy violation (./hpcforge check exits 1)" >&2 ;; \
	  2) echo "make check: exit 2: invalid configuration or policy packs (./hpcforge check exits 2)" >&2 ;; \
	  *) echo "make check: exit $$rc" >&2 ;; esac; exit $$rc

## What a change does to the running site, against a git ref, a recording or a render folder:
## make diff STACK=prod AGAINST=origin/main [DIFF_FLAGS="--acknowledge --format markdown --out out/diff.md"]
## It runs `./hpcforge diff`, which exits 1 for an unacknowledged outage or data loss and 2 when it cannot run; make
## itself exits 2 for either (the recipe's last line says which). Gates and scripts run `./hpcforge diff` directly.
AGAINST ?= HEAD
DIFF_FLAGS ?=
diff: $(STAMP)
	@rc=0; $(HPCFORGE) diff --stack $(STACK) --config $(STACK_FILE) --against $(AGAINST) $(DIFF_FLAGS) || rc=$$?; \
	case $$rc in 0) ;; 1) echo "make diff: exit 1: an unacknowledged outage or data loss (./hpcforge diff exits 1)" >&2 ;; \
	  2) echo "make diff: exit 2: the diff could not run (./hpcforge diff exits 2)" >&2 ;; \
	  *) echo "make diff: exit $$rc" >&2 ;; esac; exit $$rc

## The whole test suite (tiers whose daemons or ../shared data are missing skip with the reason).
test: $(STAMP)
	@rc=0; $(PY) -m pytest || rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make test: pytest collected no tests" >&2; exit 1; fi; exit $$rc

## The edit-test loop: every test but the slow tiers, the tests that run a whole stack and measured slow
## modules (the `slow` marker, set in tests/conftest.py). CI runs `make test`, all of them.
test-fast: $(STAMP)
	@rc=0; $(PY) -m pytest -m "not slow" -q || rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make test-fast: pytest collected no tests" >&2; exit 1; fi; exit $$rc

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	for pack in policies/*/__main__.py; do $(VENV)/bin/mypy "$$pack" || exit 1; done

## docs/configuration.md from the config models, and every generated block of README.md and docs/ (rendered
## examples, error messages, diff reports) from the real render or command of a named stack (docs/generate.py).
docs: $(STAMP)
	$(PY) -m docs.generate

## Fails (make: exit 2) when docs/configuration.md or a generated block is stale, or was edited by hand.
docs-check: $(STAMP)
	$(PY) -m docs.generate --check

bench-quick: $(STAMP)
	$(PY) -m benchmarks.scale --quick

bench: $(STAMP)
	$(PY) -m benchmarks.scale --json out/bench.json

## Mutated stack files through the reader, the program, the renderer and the schema tier: a table of outcomes.
CASES ?= 2000
SEED ?= 14
fuzz: $(STAMP)
	$(PY) -m benchmarks.stackfuzz --cases $(CASES) --seed $(SEED)

clean:
	rm -rf $(VENV) out .pytest_cache .mypy_cache .ruff_cache
