# vlmrobust — `make help` lists the targets. `make run` and `make test` set up everything they need.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON      ?= python3
VENV        ?= .venv
PY          := $(VENV)/bin/python
STAMP       := $(VENV)/.installed
# torch is installed first and explicitly, so that no dependency drags in a multi-GB CUDA build.
# CPU build by default: torch==2.13.0+cpu from wherever pip already finds it (a local wheel, a mirror),
# else from PyTorch's CPU index. GPU users: `make install TORCH_VARIANT=cu128` (any CUDA variant).
# Everything else comes from pip's own configured index.
TORCH_VERSION ?= 2.13.0
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

.PHONY: help install sync lab run figures test unit smoke browser browser-deps report bench zoo lint paper-dry gpu-check clean distclean

help:  ## list the targets
	@echo "vlmrobust — reproducible notebooks on how vision-language models fail under corruption"
	@echo
	@grep -E '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  make %-8s %s\n", $$1, $$2}'
	@echo
	@echo "  make run NB=<id> [P=<variant>]   one notebook, with params/<id>/<variant>.yaml"
	@echo "  make run ... UNTIL=resolve        stop after the resolve cell (checks a variant's parameters)"
	@echo "  notebooks: $(NB_IDS)"

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install -q --upgrade pip >/dev/null || true
	@$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install -q "torch==$(TORCH_VERSION)+$(TORCH_VARIANT)" \
	  || $(PY) -m pip install -q "torch==$(TORCH_VERSION)" --index-url "$(TORCH_INDEX)"
	$(PY) -m pip install -q -e ".[$(EXTRAS)]"
	@$(PY) -m ipykernel install --sys-prefix --name $(KERNEL) --display-name "Python 3 (vlmrobust)" >/dev/null
	@touch $(STAMP)

install: $(STAMP)  ## create .venv (when absent): the package, CPU torch, dev tools, the `vlmrobust` kernel

sync: $(STAMP)  ## generate the .ipynb twins of the notebooks (jupytext pairing)
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
	  $(VENV)/bin/papermill --prepare-only $${pfile:+-f $$pfile} build/nb/$(1).ipynb build/nb/$(1).prepared.ipynb \
	    2>/dev/null && VLMROBUST_RESULTS_ROOT=$$root VLMROBUST_FIG_ROOT=$(3) $(PY) -m vlmrobust.nbtools \
	    until-resolved --kernel $(KERNEL) build/nb/$(1).prepared.ipynb $$out; \
	else \
	  VLMROBUST_RESULTS_ROOT=$$root VLMROBUST_FIG_ROOT=$(3) $(VENV)/bin/papermill -k $(KERNEL) --cwd notebooks \
	    $${pfile:+-f $$pfile} build/nb/$(1).ipynb $$out; \
	fi
endef

run: $(STAMP)  ## run every notebook with default parameters (outputs: executed/, results/; nothing committed changes)
	@mkdir -p $(EXEC_DIR) build/nb
	@set -e; for id in $(if $(NB),$(NB),$(NB_IDS)); do $(call run_one,$$id,$(P),); done
	@$(if $(P)$(UNTIL),,$(PY) -m vlmrobust.nbtools compare-figures $(RESULTS)/figures figures $(if $(NB),--only $(NB)))

figures: $(STAMP)  ## rerun the notebooks (NB=<id> for one) with default parameters, rewriting the committed figures/
	@mkdir -p $(EXEC_DIR) build/nb
	@set -e; for id in $(if $(NB),$(NB),$(NB_IDS)); do $(call run_one,$$id,,$(CURDIR)/figures); done

unit: $(STAMP)  ## library, layout and parameter tests (no notebook execution)
	$(PY) -m pytest tests -q -p no:cacheprovider -n $(JOBS) --ignore=tests/after_smoke --ignore=tests/browser

smoke: $(STAMP)  ## every notebook under params/smoke.yaml (papermill --prepare-only, pytest --nbval-lax), then reruns
	@rm -rf $(SMOKE_DIR) && mkdir -p $(SMOKE_DIR)
	$(PY) -m vlmrobust.nbtools prepare-smoke $(SMOKE_DIR)
	OMP_NUM_THREADS=1 VLMROBUST_RESULTS_ROOT=$(CURDIR)/$(SMOKE_DIR)/results VLMROBUST_FIG_ROOT=$(CURDIR)/$(SMOKE_DIR)/figures \
	  $(PY) -m pytest -q -p no:cacheprovider -n $(JOBS) --dist loadfile --nbval-lax --nbval-cell-timeout=900 \
	  $(SMOKE_DIR)/*.ipynb
	OMP_NUM_THREADS=1 VLMROBUST_SMOKE_DIR=$(CURDIR)/$(SMOKE_DIR) $(PY) -m pytest -q -p no:cacheprovider tests/after_smoke

browser-deps:  ## Debian's chromium for the browser test (apt-get, when it is missing)
	@command -v chromium >/dev/null 2>&1 || { echo "installing Debian's chromium for the browser test"; \
	  $(if $(filter 0,$(shell id -u)),,sudo) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(if $(filter 0,$(shell id -u)),,sudo) apt-get install -y -qq chromium >/dev/null; }

browser: $(STAMP) browser-deps  ## every notebook opened in JupyterLab in headless Chromium; screenshots in build/browser/
	VLMROBUST_BROWSER_SHOTS=$(CURDIR)/build/browser $(PY) -m pytest -q -p no:cacheprovider tests/browser

test: lint unit smoke browser  ## the whole suite: lint, unit tests, notebooks under smoke parameters, determinism, browser

paper-dry: $(STAMP)  ## every paper.yaml end to end on twins of its models and data (NB=<id> for one; build/paper-dry/)
	OMP_NUM_THREADS=1 $(PY) -m vlmrobust.dry $(if $(NB),--only $(NB))

gpu-check: $(STAMP)  ## on a machine with a CUDA GPU: the twins there, notebook 05's paper variant with a full-size twin, timed
	$(PY) -m vlmrobust.dry.gpu $(if $(DEVICE),--device $(DEVICE))

report: $(STAMP)  ## a static site of the executed notebooks (after `make run`): open report/index.html
	$(PY) -m vlmrobust.report $(EXEC_DIR) report

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

distclean: clean  ## also remove the virtual environment
	rm -rf $(VENV)
