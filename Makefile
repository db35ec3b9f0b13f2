# The book's commands. `make book` and `make test` set up everything they need.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
ENV_STAMP := $(VENV)/.book-installed
PORT ?= 8000

.PHONY: help env book test test-clean check accept bench bench-show lint serve clean lock pdf mutation

help:  ## list the targets
	@grep -E '^[a-z]+:.*##' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/'

$(ENV_STAMP): pyproject.toml requirements/lock.txt requirements/torch.txt bookbuild/venv.py
	$(PYTHON) bookbuild/venv.py $(VENV)

env: $(ENV_STAMP)  ## create .venv and install the locked packages (done by book and test)

book: $(ENV_STAMP)  ## execute every chapter and build the HTML book into _build/html
	$(PY) -m bookbuild build

pdf: $(ENV_STAMP)  ## build a PDF through LaTeX (needs a TeX installation)
	$(PY) -m bookbuild build --builder pdflatex

test: $(ENV_STAMP)  ## lint; build the book once, failing on any warning or changed output; then the test suite
	$(PY) -m ruff check chapter_code bookbuild tests
	$(PY) -m bookbuild build --check
	BOOK_HTML_DIR=_build/html $(PY) -m pytest -n auto

test-clean: $(ENV_STAMP)  ## the slow tests too: a clean build of the whole book in a temporary copy
	$(PY) -m pytest -n auto -m book

# The browser tests (tests/browser) drive Debian's chromium through Playwright;
# `make test` installs it first where apt-get is available (as root).
CHROMIUM := /usr/lib/chromium/chromium
.PHONY: browser
test: browser

browser:  ## install Debian's chromium for the browser tests (they are skipped, with the reason, without it)
	@if [ -x $(CHROMIUM) ] || [ -n "$$BOOK_CHROMIUM" ]; then :; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	  echo "Installing Debian's chromium for the browser tests (apt-get)"; \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null; } \
	    || echo "NOTE: installing chromium failed; the browser tests will be skipped"; \
	else echo "NOTE: no chromium and no apt-get as root here; the browser tests will be skipped"; fi

check: $(ENV_STAMP)  ## execute what is stale and fail on any output that differs from baselines/<profile>/
	$(PY) -m bookbuild check

accept: $(ENV_STAMP)  ## record the current outputs as baselines on purpose and print what changed
	$(PY) -m bookbuild accept

bench: $(ENV_STAMP)  ## measure cold build, no-change rebuild, prose-only and one-listing edits (in a temp copy)
	$(PY) -m bookbuild bench

bench-show:  ## print the stored build measurements (benchmarks/results.json)
	@$(PY) -m bookbuild bench --show

lint: $(ENV_STAMP)  ## ruff over the Python sources
	$(PY) -m ruff check chapter_code bookbuild tests

serve: $(ENV_STAMP)  ## serve the built book at http://127.0.0.1:$(PORT)/
	$(PY) -m bookbuild serve --port $(PORT)

clean:  ## remove build outputs and the execution cache (keeps .venv)
	rm -rf _build .pytest_cache .hypothesis .ruff_cache
	find . -name __pycache__ -not -path './.venv/*' -prune -exec rm -rf {} +

lock: $(ENV_STAMP)  ## rewrite requirements/lock.txt from the current .venv (review the diff)
	{ sed -n '1,3p' requirements/lock.txt; $(PY) -m pip freeze --exclude-editable | grep -v -E '^(torch|pip)=='; } > requirements/lock.new
	mv requirements/lock.new requirements/lock.txt

SWEEP ?=
CONFIG ?= cpu
CLUSTER ?= local
.PHONY: experiments experiments-status
experiments: $(ENV_STAMP)  ## run a sweep's missing or stale jobs: make experiments SWEEP=NAME [CONFIG=cpu|cluster|smoke] [CLUSTER=local|slurm|debug]
	@test -n "$(SWEEP)" || { echo "make experiments: name the sweep, e.g. SWEEP=memory-robustness (list: $(PY) -m bookbuild experiments list)" >&2; exit 2; }
	$(PY) -m bookbuild experiments run $(SWEEP) --config $(CONFIG) --cluster $(CLUSTER)

experiments-status: $(ENV_STAMP)  ## which records of a sweep are fresh, stale or missing: make experiments-status SWEEP=NAME
	@test -n "$(SWEEP)" || { echo "make experiments-status: name the sweep, e.g. SWEEP=memory-robustness" >&2; exit 2; }
	$(PY) -m bookbuild experiments status $(SWEEP) --config $(CONFIG)

MODULE ?=
mutation: $(ENV_STAMP)  ## mutation testing (mutmut, one worker; not part of `make test`): make mutation [MODULE=recurrence] -> _build/mutation/
	$(PY) mutation/run.py $(MODULE)
