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
TORCH_VERSION ?= 2.13.0
TORCH_VARIANT ?= cpu
TORCH_INDEX   ?= https://download.pytorch.org/whl/$(TORCH_VARIANT)

NOTEBOOKS   := $(sort $(wildcard notebooks/[0-9][0-9]_*.py))
NB_IDS      := $(basename $(notdir $(NOTEBOOKS)))
EXEC_DIR    := executed
SMOKE_DIR   := build/smoke
NB          ?=
P           ?=
KERNEL      ?= python3

.PHONY: help install sync lab run test unit smoke report bench zoo lint clean distclean

help:  ## list the targets
	@echo "vlmrobust — reproducible notebooks on how vision-language models fail under corruption"
	@echo
	@grep -E '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  make %-8s %s\n", $$1, $$2}'
	@echo
	@echo "  make run NB=<id> [P=<variant>]   one notebook, with params/<id>/<variant>.yaml"
	@echo "  notebooks: $(NB_IDS)"

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install -q --upgrade pip >/dev/null || true
	@$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install -q "torch==$(TORCH_VERSION)+$(TORCH_VARIANT)" \
	  || $(PY) -m pip install -q "torch==$(TORCH_VERSION)" --index-url "$(TORCH_INDEX)" --extra-index-url https://pypi.org/simple
	$(PY) -m pip install -q -e ".[dev]"
	@touch $(STAMP)

install: $(STAMP)  ## create .venv (when absent) and install the package, CPU torch and dev tools

sync: $(STAMP)  ## generate the .ipynb twins of the notebooks (jupytext pairing)
	$(VENV)/bin/jupytext --sync $(NOTEBOOKS)

lab: sync  ## open JupyterLab on the notebooks (the .py files open as notebooks)
	$(VENV)/bin/jupyter lab notebooks/

run: $(STAMP)  ## run every notebook in order with default parameters (executed copies go to executed/)
	@mkdir -p $(EXEC_DIR) build/nb
	@set -e; ids="$(if $(NB),$(NB),$(NB_IDS))"; \
	for id in $$ids; do \
	  test -f notebooks/$$id.py || { echo "no notebook notebooks/$$id.py; choose one of: $(NB_IDS)"; exit 2; }; \
	  pfile=""; out=$(EXEC_DIR)/$$id.ipynb; \
	  if [ -n "$(P)" ]; then pfile=params/$$id/$(P).yaml; \
	    test -f $$pfile || { echo "no parameter file $$pfile"; ls params/$$id/ 2>/dev/null; exit 2; }; \
	    out=$(EXEC_DIR)/$$id.$(P).ipynb; fi; \
	  echo "== $$id $(if $(P),[$(P)],[default])"; \
	  $(VENV)/bin/jupytext -q --to ipynb -o build/nb/$$id.ipynb notebooks/$$id.py; \
	  $(VENV)/bin/papermill -k $(KERNEL) --cwd notebooks $${pfile:+-f $$pfile} build/nb/$$id.ipynb $$out; \
	done

unit: $(STAMP)  ## library, layout and determinism tests (no notebook execution)
	$(PY) -m pytest tests -q

smoke: $(STAMP)  ## every notebook under params/smoke.yaml (papermill --prepare-only, then pytest --nbval-lax)
	@rm -rf $(SMOKE_DIR) && mkdir -p $(SMOKE_DIR)
	$(PY) -m vlmrobust.nbtools prepare-smoke $(SMOKE_DIR)
	VLMROBUST_RESULTS_ROOT=$(CURDIR)/$(SMOKE_DIR)/results VLMROBUST_FIG_ROOT=$(CURDIR)/$(SMOKE_DIR)/figures \
	  $(PY) -m pytest -q -p no:cacheprovider --nbval-lax --nbval-cell-timeout=900 $(SMOKE_DIR)/*.ipynb

test: unit smoke  ## the whole suite: unit tests, then every notebook under smoke parameters

report: $(STAMP)  ## HTML of the executed notebooks (after `make run`) into report/
	@ls $(EXEC_DIR)/*.ipynb >/dev/null 2>&1 || { echo "nothing in $(EXEC_DIR)/: run 'make run' first"; exit 2; }
	$(VENV)/bin/jupyter nbconvert --to html --output-dir report $(EXEC_DIR)/*.ipynb

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
