# Two commands do everything on a fresh machine: `make reports` and `make test`.
# Each creates or refreshes the virtual environment from pyproject.toml first.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
OUT ?= reports

.PHONY: all reports test bench verify mutants analyses torch clean

all: reports

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
	@touch $@

# The PyTorch cross-checks: the CPU build, which pip takes from local disk here.
torch: $(STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test,torch]'

reports: $(STAMP)
	$(BIN)/python -m analyses --out $(OUT)
	$(BIN)/python -m stats verify --mutants --out $(OUT)

analyses: $(STAMP)
	$(BIN)/python -m analyses --out $(OUT)

verify: $(STAMP)
	$(BIN)/python -m stats verify --out $(OUT)

test: $(STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python -m benchmarks --out $(OUT)

clean:
	rm -rf $(OUT)/data $(OUT)/figures $(OUT)/bench $(OUT)/*.csv .pytest_cache .hypothesis
