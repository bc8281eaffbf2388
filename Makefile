# The two commands of the README's Quick start: `make demo` and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
SPRAYCV := $(VENV)/bin/spraycv

.PHONY: setup demo test lint samples bench

setup:
	bash scripts/setup.sh dev

# Main job on embedded defaults: measure the bundled sample images.
demo: setup
	$(SPRAYCV) measure data/samples/images --overlay-dir outputs/demo

test: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/pytest -q

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

samples: setup
	$(PY) scripts/make_samples.py

bench: setup
	$(PY) benchmarks/geometry_speed.py
	$(PY) benchmarks/geometry_accuracy.py --n 500
	$(PY) benchmarks/synth_speed.py
