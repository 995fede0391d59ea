# vlmrobust — `make help` lists the targets. `make run` and `make test` set up everything they need.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON      ?= python3
VENV        ?= .venv
PY          := $(VENV)/bin/python
STAMP       := $(VENV)/.installed
# The lock: the exact version of every package the default install resolves, as pip constraints (-c).
# `make install` honours it; `make lock` rewrites it; LOCK= (empty) installs the newest releases the
# ranges in pyproject.toml allow (`make test-latest` does that in its own .venv-latest).
LOCK        ?= requirements-lock.txt
PIP_LOCK    := $(if $(LOCK),-c $(LOCK))
# torch is installed first and explicitly, so that no dependency drags in a multi-GB CUDA build.
# CPU build by default: torch==<the lock's version>+cpu from wherever pip already finds it (a local wheel,
# a mirror), else from PyTorch's CPU index. GPU users: `make install TORCH_VARIANT=cu128` (any CUDA
# variant; the lock pins torch's version, not its build). Everything else comes from pip's own index.
TORCH_VERSION ?= $(or $(if $(LOCK),$(shell sed -n 's/^torch==\([^+]*\).*/\1/p' $(LOCK) 2>/dev/null)),2.13.0)
TORCH_VARIANT ?= cpu
TORCH_INDEX   ?= https://download.pytorch.org/whl/$(TORCH_VARIANT)
# PAPER=1 also installs the `paper` extra (what real hub models need, e.g. torchvision's video processors).
PAPER       ?=
comma       := ,
EXTRAS      := dev$(if $(PAPER),$(comma)paper)
KERNEL      ?= vlmrobust
NOTEBOOKS   := $(sort $(wildcard notebooks/[0-9][0-9]_*.py))
NB_IDS      := $(basename $(notdir $(NOTEBOOKS)))
EXEC_DIR    ?= executed
SMOKE_DIR   := build/smoke
RESULTS     ?= results
NB          ?=
P           ?=
UNTIL       ?=
# test processes run side by side (pytest-xdist): one per core by default
JOBS        ?= auto

.PHONY: help install lock-check lock test-latest sync lab run figures scorecard test unit smoke browser browser-deps report instructor bench zoo lint paper-dry gpu-check clean distclean

help:  ## list the targets
	@echo "vlmrobust — reproducible notebooks on how vision-language models fail under corruption"
	@echo
	@grep -E '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  make %-11s %s\n", $$1, $$2}'
	@echo
	@echo "  make run NB=<id> [P=<variant>]   one notebook, with params/<id>/<variant>.yaml"
	@echo "  make run ... UNTIL=resolve        stop after the resolve cell (checks a variant's parameters)"
	@echo "  notebooks: $(NB_IDS)"

# pip, setuptools and wheel come from the lock too, and the package builds with them (no build isolation),
# so that nothing in the install floats with the day's releases.
$(STAMP): pyproject.toml $(LOCK)
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade $(PIP_LOCK) pip setuptools wheel
	@$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install -q "torch==$(TORCH_VERSION)+$(TORCH_VARIANT)" \
	  || $(PY) -m pip install -q "torch==$(TORCH_VERSION)" --index-url "$(TORCH_INDEX)"
	$(PY) -m pip install -q $(PIP_LOCK) --no-build-isolation -e ".[$(EXTRAS)]"
	@$(PY) -m ipykernel install --sys-prefix --name $(KERNEL) --display-name "Python 3 (vlmrobust)" >/dev/null
	@$(if $(LOCK),$(PY) -m vlmrobust.repro --lock $(LOCK))
	@touch $(STAMP)

install: $(STAMP)  ## create .venv (when absent) from the lock: the package, CPU torch, dev tools, the kernel
	@$(if $(LOCK),$(PY) -m vlmrobust.repro --lock $(LOCK) >/dev/null \
	  || { echo "reinstalling the locked versions"; rm -f $(STAMP) && $(MAKE) --no-print-directory $(STAMP); })

lock-check: $(STAMP)  ## compare the installed packages with the lock (ALL=1 prints every pin); fails on drift
	$(if $(LOCK),$(PY) -m vlmrobust.repro --lock $(LOCK) $(if $(ALL),--all),@echo "no lock (LOCK is empty)")

LOCK_VENV := build/lock-venv
# One lock for every install: the default one and the paper extra's pure-Python packages are resolved
# together (as uv and poetry lock all extras at once), so that `make install PAPER=1` adds packages to
# the locked set without changing it. torchvision is left out: it must match the user's torch build.
PAPER_PURE = $(shell $(PYTHON) -c 'import tomllib; p = tomllib.load(open("pyproject.toml", "rb")); \
  print(" ".join(repr(s) for s in p["project"]["optional-dependencies"]["paper"] if "torchvision" not in s))')
lock:  ## re-resolve every dependency at its newest allowed release in a fresh venv; rewrites the lock
	rm -rf $(LOCK_VENV) && $(PYTHON) -m venv $(LOCK_VENV)
	$(LOCK_VENV)/bin/python -m pip install -q --upgrade pip setuptools wheel
	$(LOCK_VENV)/bin/python -m pip install -q "torch==$(TORCH_VERSION)+cpu" \
	  || $(LOCK_VENV)/bin/python -m pip install -q "torch==$(TORCH_VERSION)" --index-url "https://download.pytorch.org/whl/cpu"
	$(LOCK_VENV)/bin/python -m pip install -q --no-build-isolation -e ".[dev]" $(PAPER_PURE)
	@{ echo "# The lock: the exact version of every package of the default install (the package, its dev extra,"; \
	  echo "# pip, setuptools, wheel) and of the paper extra's pure-Python packages, resolved together and read"; \
	  echo "# by pip as constraints. Written by \`make lock\`: do not edit by hand."; \
	  echo "# Resolved with $$($(LOCK_VENV)/bin/python -c 'import platform; print("CPython", platform.python_version(), \
	    "on", platform.system(), platform.machine())') and torch's CPU build (the pin has no +cpu: any build matches)."; \
	  $(LOCK_VENV)/bin/python -m pip freeze --all --exclude-editable | sed 's/^\(torch==[^+]*\)+.*/\1/' \
	    | LC_ALL=C sort -f; } > requirements-lock.txt
	@echo "wrote requirements-lock.txt ($$(grep -c '==' requirements-lock.txt) pins); \`git diff requirements-lock.txt\` shows what changed"

test-latest:  ## the whole suite on the newest releases pyproject's ranges allow, in a fresh .venv-latest (no lock)
	rm -rf .venv-latest
	$(MAKE) test VENV=.venv-latest LOCK= TORCH_VERSION=$(TORCH_VERSION)

sync: $(STAMP)  ## generate the paired .ipynb notebooks (jupytext pairing)
	$(VENV)/bin/jupytext --sync $(NOTEBOOKS)

lab: sync  ## open JupyterLab on the notebooks (the .py files open as notebooks, on the vlmrobust kernel)
	$(VENV)/bin/jupyter lab $(if $(filter 0,$(shell id -u)),--allow-root) notebooks/

# One notebook run: $(1) = notebook id, $(2) = parameter variant (may be empty), $(3) = figure folder.
# Default runs write to results/ (figures to results/figures/), a variant to results/variants/<variant>/.
define run_one
	test -f notebooks/$(1).py || { echo "no notebook notebooks/$(1).py; choose one of: $(NB_IDS)"; exit 2; }; \
	pfile=""; out=$(EXEC_DIR)/$(1).ipynb; root=$(CURDIR)/$(RESULTS); \
	if [ -n "$(2)" ]; then pfile=params/$(1)/$(2).yaml; \
	  test -f $$pfile || { echo "no parameter file $$pfile; variants of $(1): $$(ls params/$(1)/ 2>/dev/null | sed 's/\.yaml//' | tr '\n' ' ')"; exit 2; }; \
	  out=$(EXEC_DIR)/$(1).$(2).ipynb; root=$(CURDIR)/$(RESULTS)/variants/$(2); fi; \
	echo "== $(1) $(if $(2),[$(2)],[default]) -> $$root"; \
	$(VENV)/bin/jupytext -q --to ipynb -o build/nb/$(1).ipynb notebooks/$(1).py; \
	if [ "$(UNTIL)" = resolve ]; then \
	  $(VENV)/bin/papermill --prepare-only $${pfile:+-f $$pfile -p variant $(2)} build/nb/$(1).ipynb build/nb/$(1).prepared.ipynb \
	    2>/dev/null && VLMROBUST_PROGRESS=$${VLMROBUST_PROGRESS:-line} VLMROBUST_RESULTS_ROOT=$$root VLMROBUST_FIG_ROOT=$(3) $(PY) -m vlmrobust.nbtools \
	    until-resolved --kernel $(KERNEL) build/nb/$(1).prepared.ipynb $$out; \
	else \
	  VLMROBUST_PROGRESS=$${VLMROBUST_PROGRESS:-line} VLMROBUST_RESULTS_ROOT=$$root VLMROBUST_FIG_ROOT=$(3) $(VENV)/bin/papermill -k $(KERNEL) --cwd notebooks \
	    $${pfile:+-f $$pfile -p variant $(2)} build/nb/$(1).ipynb $$out; \
	fi
endef

run: $(STAMP)  ## run every notebook with default parameters (outputs: executed/, results/; nothing committed changes)
	@mkdir -p $(EXEC_DIR) build/nb
	@set -e; for id in $(if $(NB),$(NB),$(NB_IDS)); do $(call run_one,$$id,$(P),); done
	@$(if $(UNTIL),,$(PY) -m vlmrobust.scorecard)
	@$(if $(P)$(UNTIL),,$(PY) -m vlmrobust.nbtools compare-figures $(RESULTS)/figures figures $(if $(NB),--only $(NB)))

figures: $(STAMP)  ## rerun the notebooks (NB=<id> for one) with default parameters, rewriting the committed figures/
	@mkdir -p $(EXEC_DIR) build/nb
	@set -e; for id in $(if $(NB),$(NB),$(NB_IDS)); do $(call run_one,$$id,,$(CURDIR)/figures); done
	@$(if $(NB),,$(MAKE) --no-print-directory scorecard SCORECARD_FIGS=$(CURDIR)/figures)

scorecard: $(STAMP)  ## run the blind and deciding variants the scorecard reads that have no results (ALL=1: the Bench-C-scale ones too), then write results/scorecard.csv and its figure
	@mkdir -p $(EXEC_DIR) build/nb
	@set -e; for pair in $$($(PY) -m vlmrobust.scorecard --missing $(if $(ALL),--all)); do \
	  nb=$${pair%%:*}; v=$${pair##*:}; $(call run_one,$$nb,$$v,); done
	@$(if $(SCORECARD_FIGS),VLMROBUST_FIG_ROOT=$(SCORECARD_FIGS)) $(PY) -m vlmrobust.scorecard

unit: $(STAMP)  ## library, layout and parameter tests (no notebook execution)
	$(PY) -m pytest tests -q -p no:cacheprovider -n $(JOBS) --ignore=tests/after_smoke --ignore=tests/browser

smoke: $(STAMP)  ## every notebook under params/smoke.yaml (papermill --prepare-only, pytest --nbval-lax), then reruns
	@rm -rf $(SMOKE_DIR) && mkdir -p $(SMOKE_DIR)
	$(PY) -m vlmrobust.nbtools prepare-smoke $(SMOKE_DIR)
	OMP_NUM_THREADS=1 VLMROBUST_PROGRESS=$${VLMROBUST_PROGRESS:-line} VLMROBUST_RESULTS_ROOT=$(CURDIR)/$(SMOKE_DIR)/results VLMROBUST_FIG_ROOT=$(CURDIR)/$(SMOKE_DIR)/figures \
	  $(PY) -m pytest -q -p no:cacheprovider -n $(JOBS) --dist loadfile --nbval-lax --nbval-cell-timeout=900 \
	  $(SMOKE_DIR)/*.ipynb
	OMP_NUM_THREADS=1 VLMROBUST_SMOKE_DIR=$(CURDIR)/$(SMOKE_DIR) $(PY) -m pytest -q -p no:cacheprovider tests/after_smoke

browser-deps:  ## Debian's chromium for the browser test (apt-get, when it is missing)
	@command -v chromium >/dev/null 2>&1 || { echo "installing Debian's chromium for the browser test"; \
	  $(if $(filter 0,$(shell id -u)),,sudo) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(if $(filter 0,$(shell id -u)),,sudo) apt-get install -y -qq chromium >/dev/null; }

browser: $(STAMP) browser-deps  ## every notebook opened in JupyterLab in headless Chromium; screenshots in build/browser/
	VLMROBUST_BROWSER_SHOTS=$(CURDIR)/build/browser $(PY) -m pytest -q -p no:cacheprovider tests/browser

test: lock-check lint unit smoke browser  ## the whole suite: lock check, lint, unit tests, smoke notebooks, determinism, browser

paper-dry: $(STAMP)  ## every paper.yaml end to end on twins of its models and data (NB=<id> for one; build/paper-dry/)
	OMP_NUM_THREADS=1 $(PY) -m vlmrobust.dry $(if $(NB),--only $(NB))

gpu-check: $(STAMP)  ## on a machine with a CUDA GPU: the twins there, notebook 05's paper variant with a full-size twin, timed
	$(PY) -m vlmrobust.dry.gpu $(if $(DEVICE),--device $(DEVICE))

report: $(STAMP)  ## a static site of the executed notebooks (after `make run`): open report/index.html
	$(PY) -m vlmrobust.report $(EXEC_DIR) report

instructor: $(STAMP)  ## run every lesson unchanged and with each exercise's change; rewrite docs/instructor.md (~40 min)
	$(PY) -m vlmrobust.course --out docs/instructor.md $(if $(NB),--only $(NB))

bench: $(STAMP)  ## run the benchmarks in bench/ (each prints ratios against its peer)
	@set -e; for b in $(sort $(wildcard bench/*.py)); do echo "== $$b"; $(PY) $$b; done

zoo: $(STAMP)  ## retrain every model organism from its committed config (long; runs go to runs/)
	$(PY) -m vlmrobust.train --all

lint: $(STAMP)  ## ruff on the library, tests, benchmarks and notebooks
	$(VENV)/bin/ruff check lib tests bench notebooks

.PHONY: mutants
MUTANTS_DIR := build/mutants
mutants: $(STAMP)  ## mutation testing (mutmut) of metrics, physical/escalation/natural corruptions and answer parsing
	@$(PY) -c "import mutmut" 2>/dev/null || $(PY) -m pip install -q -e ".[mutants]"
	@rm -rf $(MUTANTS_DIR) && mkdir -p $(MUTANTS_DIR)/src
	@cp -r tests pyproject.toml $(MUTANTS_DIR)/ && cp -r lib/vlmrobust $(MUTANTS_DIR)/src/ && rm -rf $(MUTANTS_DIR)/src/vlmrobust/zoo
	cd $(MUTANTS_DIR) && OMP_NUM_THREADS=1 nice -n 10 $(CURDIR)/$(VENV)/bin/mutmut run --max-children 1
	cd $(MUTANTS_DIR) && $(CURDIR)/$(VENV)/bin/mutmut results --all true | $(CURDIR)/$(PY) $(CURDIR)/tests/mutation_score.py

clean:  ## remove generated notebooks, executed copies, reports, results and build files
	rm -rf build $(EXEC_DIR) report results notebooks/*.ipynb .pytest_cache

distclean: clean  ## also remove the virtual environments
	rm -rf $(VENV) .venv-latest
