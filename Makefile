# tcpmodels — the two commands that matter: `make report` and `make test`.
# Both create .venv on first use with the machine's Python 3.11.

PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip
# The commands below run .venv's own executables; a different virtualenv activated in the calling shell
# must not leak into them (IPython, which the notebooks and widgets start, warns when VIRTUAL_ENV names
# another environment, and the tests turn warnings into errors).
export VIRTUAL_ENV := $(abspath $(VENV))
# pytest arguments, e.g. make test PYTEST_ARGS='-m "not testbed and not sim"'
PYTEST_ARGS ?=
# Debian packages the tests and the testbed need (installed only when root and missing);
# gcc and python3.11-dev build the compiled pcap kernel (tcpmodels.traces.ckernel, optional).
SYSTEM_PACKAGES := tshark tcptrace tcpdump ethtool iperf3 iproute2 chromium gcc python3.11-dev clang llvm libbpf-dev bpftool

.PHONY: help venv venv-full system-deps report test test-fast lab clean

help:
	@echo "make report  execute every notebook on data/ -> reports/index.html, figures/"
	@echo "make test    system packages (when root), .venv with all extras, the whole test suite"
	@echo "make lab     JupyterLab on 127.0.0.1 with a token, on a working copy in lab/ (made by tcpmodels init)"

$(VENV)/.base: setup.cfg setup.py pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e '.[lab]'
	touch $@

$(VENV)/.full: $(VENV)/.base
	$(PIP) install -q -e '.[test,lab,sim]'
	touch $@

venv: $(VENV)/.base
venv-full: $(VENV)/.full

# Installs Debian packages only when running as root and something is missing;
# otherwise says what is missing (tests that need it then skip with a message).
system-deps:
	@missing=""; for p in $(SYSTEM_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then echo "system packages present"; \
	elif [ "$$(id -u)" = 0 ]; then \
	  echo "installing:$$missing"; \
	  echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections; \
	  DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing >/dev/null; \
	else echo "not root: missing$$missing (tests needing them will skip)"; fi

report: $(VENV)/.base
	$(BIN)/tcpmodels report

test: system-deps $(VENV)/.full
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# Unit tests and notebooks only: no root, no ns-3, no browser.
test-fast: $(VENV)/.full
	$(BIN)/python -m pytest -m "not testbed and not sim and not browser" $(PYTEST_ARGS)

# The Lab opens a working copy written by `tcpmodels init` ($(LAB_DIR), ignored by git), never the tracked
# notebooks/: JupyterLab saves outputs and widget state into the notebooks it runs. `rm -rf $(LAB_DIR)` (or
# `make lab LAB_DIR=...`) for fresh copies; `make lab LAB_ARGS=--students` makes them without the answers.
# Lecture mode for a projector: TCPMODELS_LECTURE=1 make lab.
# Token: $JUPYTER_TOKEN if set, else a random one that Jupyter prints in the URL (one it did not generate is masked as "...").
# Only on 127.0.0.1. As root (--allow-root) the browser terminals are switched off: a shell in a tab would be a root shell.
LAB_DIR ?= lab
LAB_ARGS ?=
lab: $(VENV)/.base
	@test -d "$(LAB_DIR)/notebooks" || $(BIN)/tcpmodels init "$(LAB_DIR)" $(LAB_ARGS)
	@echo "JupyterLab on the working copy $(LAB_DIR)/notebooks (rm -rf $(LAB_DIR) for fresh copies of the notebooks)"
	$(BIN)/jupyter lab --ip=127.0.0.1 --no-browser --notebook-dir="$(LAB_DIR)/notebooks" \
	  $$([ "$$(id -u)" = 0 ] && echo --allow-root --ServerApp.terminals_enabled=False)

clean:
	rm -rf reports .pytest_cache .hypothesis build dist *.egg-info
