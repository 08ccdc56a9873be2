# The two commands first: `make demo` and `make test`. Every target sets up .venv when missing:
# `make demo` installs what the product needs, the other targets add the tools to test it.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PRODUCT := $(VENV)/.installed-product
STAMP   := $(VENV)/.installed-dev

.PHONY: demo test test-thorough generate check-generated lint bench notebooks lab venv clean

demo: $(PRODUCT)
	$(BIN)/dims demo

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/pytest -n 2

test-thorough: $(STAMP)
	HYPOTHESIS_PROFILE=thorough $(BIN)/pytest -n 2

# Regenerate generated_client/ from openapi.yaml (the folder is replaced whole, because
# `--overwrite` only wipes models/ and api/). tests/test_generated_client.py runs the same.
generate: $(STAMP)
	tools/generate_client.sh generated_client

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python -m benchmarks

notebooks lab: $(STAMP)
	$(BIN)/pip install -q -c requirements.lock -e '.[dev,lab]'
	$(BIN)/jupyter lab notebooks/ $$([ "$$(id -u)" = 0 ] && echo --allow-root)

venv: $(STAMP)

$(PRODUCT): pyproject.toml requirements.lock hatch_build.py openapi.yaml $(wildcard analysis/*/*.[ch])
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -c requirements.lock -e .
	touch $(PRODUCT)

$(STAMP): $(PRODUCT) tools/spark-s3a-jars.txt
	$(BIN)/python -m pip install -q -c requirements.lock -e '.[dev]'
	PYTHON=$(BIN)/python tools/spark-s3a-jars.sh $(VENV)/spark-jars
	touch $(STAMP)

clean:
	rm -rf $(VENV) dims-data dims-demo .pytest_cache .ruff_cache .hypothesis
