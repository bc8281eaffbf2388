# The two commands of the README's Quick start: `make demo` and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
SPRAYCV := $(VENV)/bin/spraycv

.PHONY: setup demo measure-samples test lint samples bench

setup:
	bash scripts/setup.sh dev

# Main job on embedded defaults: the field dashboard on http://127.0.0.1:8501, fed by an
# embedded daemon on the bundled sample video with the shipped model (Ctrl+C stops it).
demo: setup
	$(SPRAYCV) dashboard

# The command-line pipeline on the bundled sample images (table + overlays).
measure-samples: setup
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
