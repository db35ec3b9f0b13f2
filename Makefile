# The book's commands. `make book` and `make test` set up everything they need.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
ENV_STAMP := $(VENV)/.book-installed
PORT ?= 8000

.PHONY: help env book test test-clean check check-portable accept bench bench-show lint serve clean lock pdf mutation gpu-run watch

help:  ## list the targets
	@grep -E '^[a-z]+:.*##' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/'

$(ENV_STAMP): pyproject.toml requirements/lock.txt requirements/torch.txt requirements/jax.txt bookbuild/tools/venv.py
	$(PYTHON) bookbuild/tools/venv.py $(VENV)

env: $(ENV_STAMP)  ## create .venv and install the locked packages (done by book and test)

book: $(ENV_STAMP)  ## execute every chapter and build the HTML book into _build/html
	$(PY) -m bookbuild build

CHROMIUM := /usr/lib/chromium/chromium
NODE_TOOLS := tests/browser/node
# The PDF is set in DejaVu (text, code and math: bookbuild/site/latex/bookprint.sty); fontconfig's fc-list finds it.
HAVE_TEX = { command -v xelatex && command -v latexmk && command -v pdftotext && kpsewhich environ.sty \
  && fc-list 'DejaVu Serif:style=Italic' | grep -q . && fc-list 'DejaVu Math TeX Gyre' | grep -q .; } >/dev/null 2>&1
TEX_PACKAGES := texlive-latex-recommended texlive-fonts-recommended texlive-latex-extra texlive-xetex latexmk fontconfig fonts-dejavu-core fonts-dejavu-extra poppler-utils

pdf: $(ENV_STAMP) tex  ## build the PDF edition into _build/latex/book.pdf (installs TeX Live with apt where it can)
	$(PY) -m bookbuild build --builder pdflatex

.PHONY: tex
tex:  ## install the TeX Live packages the PDF needs (Debian/Ubuntu, as root); elsewhere say what to install
	@if $(HAVE_TEX); then :; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	  echo "Installing TeX Live for the PDF (apt-get, about 85 MB)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(TEX_PACKAGES) >/dev/null; \
	else echo "make pdf needs xelatex, latexmk, pdftotext and the DejaVu fonts (with DejaVu Math). On Debian or Ubuntu, as root:" >&2; \
	  echo "  apt-get install --no-install-recommends $(TEX_PACKAGES)" >&2; \
	  echo "Elsewhere, install TeX Live with its xetex, latex-extra and fonts-recommended collections, latexmk, poppler's pdftotext and the DejaVu fonts." >&2; exit 2; fi

# What `make test` installs where apt-get runs as root (chromium, TeX Live, Slurm, npm and Java, then the pinned
# npm tools) goes on in the background while the book executes: `.ci/setup-system start` begins one sequential job
# (one apt-get at a time), logged to _build/setup.log, and `make test` waits for it just before the PDF. Without
# apt-get as root, it prints what will be skipped. BOOK_SETUP_STRICT=1 (.ci/run) makes a failed install fail.
# bookbuild/runs/slurm_cluster.py's PACKAGES (tests/test_setup_system.py checks they agree), for the Slurm round trip
SLURM_PACKAGES := slurm-wlm munge
SETUP_SYSTEM = TEX_PACKAGES="$(TEX_PACKAGES)" SLURM_PACKAGES="$(SLURM_PACKAGES)" CHROMIUM=$(CHROMIUM) \
  NODE_TOOLS=$(NODE_TOOLS) bash .ci/setup-system
# One line per phase of `make test`, read by benchmarks/ci_time.sh: "make test: [<epoch s> <UTC time>] <phase>"
phase = echo "make test: [$$(date +%s) $$(date -u +%H:%M:%S)] $(1)"

# What `make lint` and `make test` check: ruff's rules over the Python sources; every Python source (chapter_code/,
# bookbuild/, tests/, labs/) formatted by ruff at one line length, 88 columns (pyproject.toml), so that a listing fits
# the page; the chapters' code cells formatted the same (bookbuild/lint/cellformat.py);
# every taught object a visible cell calls shown (lint/listings.py); no build vocabulary in the reading flow (lint/vocabulary.py).
define LINT
$(PY) -m ruff check chapter_code bookbuild tests labs
$(PY) -m ruff format --check chapter_code bookbuild tests labs
$(PY) -m bookbuild.lint.cellformat --check
$(PY) -m bookbuild.lint.listings
$(PY) -m bookbuild.lint.vocabulary
endef

.PHONY: setup-start pdf-ready
setup-start:  # start the background set-up of `make test` (first, so it overlaps creating .venv too)
	@$(call phase,set-up started)
	@$(SETUP_SYSTEM) start

# What the build of `make test` runs once every chapter has executed, before the PDF it builds beside the HTML:
# wait for the background set-up (it installs TeX Live); exit 3 where there is no TeX Live (no PDF, a note).
pdf-ready:
	@$(call phase,PDF beside the HTML: waiting for the set-up)
	@$(SETUP_SYSTEM) wait
	@$(call phase,PDF beside the HTML)
	@$(HAVE_TEX) >/dev/null 2>&1 || exit 3

test: setup-start $(ENV_STAMP)  ## lint; build the book once, failing on any warning or changed output; the PDF; the fragility probe; then the test suite
	@$(call phase,environment ready; lint)
	$(LINT)
	@$(call phase,build (the HTML and the PDF beside it))
	$(PY) -m bookbuild build --check --pdf-after "$(MAKE) -s pdf-ready"
	@$(call phase,fragility probe)
	$(PY) -m bookbuild portable
	@$(call phase,tests)
	BOOK_HTML_DIR=_build/html BOOK_PDF=$$($(HAVE_TEX) && echo _build/latex/book.pdf) $(PY) -m pytest -n auto --dist loadgroup
	@$(call phase,done)

test-clean: $(ENV_STAMP)  ## the slow tests: a clean build of the whole book in a temporary copy; one record of each sweep retrained
	$(PY) -m pytest -n auto -m book

# The browser tests (tests/browser) drive Debian's chromium through Playwright;
# `make test` installs it (in the background, see setup-start) where apt-get is available (as root).
.PHONY: browser

browser:  ## install Debian's chromium for the browser tests (they are skipped, with the reason, without it)
	@if [ -x $(CHROMIUM) ] || [ -n "$$BOOK_CHROMIUM" ]; then :; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	  echo "Installing Debian's chromium for the browser tests (apt-get)"; \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null; } \
	    || echo "NOTE: installing chromium failed; the browser tests will be skipped"; \
	else echo "NOTE: no chromium and no apt-get as root here; the browser tests will be skipped"; fi

# axe-core and the Nu HTML validator for the browser tests' audit (tests/browser/test_audit.py), pinned by
# tests/browser/node/package-lock.json and installed with npm; never part of the site. The validator runs on Java.
NODE_STAMP := $(NODE_TOOLS)/node_modules/.book-installed
.PHONY: browser-tools

browser-tools: $(NODE_STAMP)  ## install the pinned npm tools of the browser tests (axe-core, vnu-jar)

$(NODE_STAMP): $(NODE_TOOLS)/package.json $(NODE_TOOLS)/package-lock.json
	@if ! command -v npm >/dev/null 2>&1 || ! command -v java >/dev/null 2>&1; then \
	  if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	    echo "Installing Debian's npm and Java for the browser tests' audit (apt-get)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm default-jre-headless >/dev/null; \
	  fi; \
	fi
	@if command -v npm >/dev/null 2>&1; then \
	  cd $(NODE_TOOLS) && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error && touch node_modules/.book-installed; \
	else echo "NOTE: no npm here; the browser tests' audit (axe-core, Nu validator) will be skipped"; fi

LIGHTHOUSE_STAMP := tests/browser/lighthouse/node_modules/.book-installed
$(LIGHTHOUSE_STAMP): tests/browser/lighthouse/package.json tests/browser/lighthouse/package-lock.json $(NODE_STAMP)
	cd tests/browser/lighthouse && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error && touch node_modules/.book-installed

.PHONY: audit
audit: $(ENV_STAMP) browser $(LIGHTHOUSE_STAMP)  ## Lighthouse (mobile, median of 3) on the chapters, served compressed; scores in _build/lighthouse/
	$(PY) -m bookbuild build
	BOOK_HTML_DIR=_build/html $(PY) -m pytest tests/browser/test_lighthouse.py -m audit -n 1 -s

check: $(ENV_STAMP)  ## execute what is stale and fail on any output that differs from baselines/<profile>/
	$(PY) -m bookbuild check

check-portable: $(ENV_STAMP)  ## the fragility probe: chapters and sweep spot checks again on another CPU's kernels, at declared precision
	$(PY) -m bookbuild portable

accept: $(ENV_STAMP)  ## record the current outputs as baselines on purpose and print what changed
	$(PY) -m bookbuild accept

bench: $(ENV_STAMP)  ## the authors' loop beside a plain Jupyter Book build, medians (in temp copies): make bench [REPEATS=3]
	$(PY) -m bookbuild bench --repeats $(or $(REPEATS),3)

bench-show:  ## print the stored build measurements (benchmarks/results.json)
	@$(PY) -m bookbuild bench --show

lint: $(ENV_STAMP)  ## ruff over the Python sources; every source and chapter cell formatted at 88 columns
	$(LINT)

serve: $(ENV_STAMP)  ## serve the built book at http://127.0.0.1:$(PORT)/
	$(PY) -m bookbuild serve --port $(PORT)

clean:  ## remove build outputs and the execution cache (keeps .venv)
	rm -rf _build .pytest_cache .hypothesis .ruff_cache
	find . -name __pycache__ -not -path './.venv/*' -prune -exec rm -rf {} +

lock: $(ENV_STAMP)  ## rewrite requirements/lock.txt from the current .venv, leaving out torch, jax.txt's and mutation.txt's stacks
	{ sed -n '1,3p' requirements/lock.txt; $(PY) -m pip freeze --exclude-editable | grep -v -E '^(torch|pip)==' \
	  | grep -v -i -E "^($$(cat requirements/jax.txt requirements/mutation.txt requirements/watch.txt | grep -v '^#' | cut -d= -f1 | paste -sd'|'))=="; } > requirements/lock.new
	mv requirements/lock.new requirements/lock.txt

SWEEP ?=
CONFIG ?= cpu
CLUSTER ?= local
.PHONY: experiments experiments-status
experiments: $(ENV_STAMP)  ## run a sweep's missing or stale jobs: make experiments SWEEP=NAME [CONFIG=cpu|cluster|smoke] [CLUSTER=local|slurm|debug] [DEVICE=cuda]
	@test -n "$(SWEEP)" || { echo "make experiments: name the sweep, e.g. SWEEP=memory-robustness (list: $(PY) -m bookbuild experiments list)" >&2; exit 2; }
	$(PY) -m bookbuild experiments run $(SWEEP) --config $(CONFIG) --cluster $(CLUSTER) $(if $(DEVICE),--device $(DEVICE))

experiments-status: $(ENV_STAMP)  ## which records of a sweep are fresh, stale or missing: make experiments-status SWEEP=NAME
	@test -n "$(SWEEP)" || { echo "make experiments-status: name the sweep, e.g. SWEEP=memory-robustness" >&2; exit 2; }
	$(PY) -m bookbuild experiments status $(SWEEP) --config $(CONFIG) $(if $(DEVICE),--device $(DEVICE))

# The GPU build in one command (bookbuild/tools/gpu_run.py, standard library only: it makes .venv itself, reusing the
# host's CUDA torch). Everything that must come back lands in OUT; DRY=1 walks the same steps at toy size on the CPU
# (with .venv's Python: the dry run checks the environment instead of making one).
OUT ?= _build/gpu-run
DRY ?=
gpu-run:  ## on a GPU machine: env, every chapter on CUDA, baselines/<gpu>/, the word-lm-scale gpu sweep -> OUT (8 min)
	$(if $(DRY),$(PY),$(PYTHON)) bookbuild/tools/gpu_run.py $(OUT) $(if $(DRY),--dry-run)

# sphinx-autobuild and its own dependencies go into _build/watch-tools (pip --target, --no-deps: every one is pinned
# in requirements/watch.txt), never into .venv: the book's environment stays what requirements/lock.txt says.
WATCH_TOOLS := _build/watch-tools
watch: $(ENV_STAMP)  ## serve the book on 127.0.0.1:$(PORT), rebuild on save (executing what is stale), reload the browser
	@PYTHONPATH=$(WATCH_TOOLS) $(PY) -c "import sphinx_autobuild" 2>/dev/null || $(PY) -m pip install --quiet \
	  --disable-pip-version-check --no-deps --target $(WATCH_TOOLS) -r requirements/watch.txt
	$(PY) -m bookbuild.tools.watch $(PORT)

MODULE ?=
mutation: $(ENV_STAMP)  ## mutation testing (mutmut, one worker; not part of `make test`): make mutation [MODULE=recurrence] -> _build/mutation/
	@$(PY) -c "import mutmut" 2>/dev/null || $(PY) -m pip install --quiet --disable-pip-version-check \
	  -r requirements/mutation.txt -c requirements/lock.txt
	$(PY) mutation/run.py $(MODULE)
