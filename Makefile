# The two commands first: `make demo` and `make test`. Every target sets up .venv when missing:
# `make demo` installs what the product needs, the other targets add the tools to test it.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PRODUCT := $(VENV)/.installed-product
STAMP   := $(VENV)/.installed-dev
# `make docs` needs the docs tools only (mkdocs and its plugins), not the test tools.
DOCS_STAMP := $(VENV)/.installed-docs

.PHONY: demo test wheel docs test-sanitize test-versions test-thorough generate check-generated lint bench notebooks lab venv clean

demo: $(PRODUCT)
	$(BIN)/dims demo

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	site=$$(mktemp -d) && NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir "$$site"; status=$$?; rm -rf "$$site"; exit $$status
	$(BIN)/pytest -n 2

# An sdist and a wheel built from it into dist/ (git-ignored), the wheel repaired to a manylinux
# tag by auditwheel: tools/build-wheel.sh. tests/spec/test_wheel.py installs such a wheel.
wheel: $(STAMP)
	tools/build-wheel.sh dist

# The reference site (docs/ and the API pages from the docstrings) at http://127.0.0.1:8000
docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve

# The tests that drive the C modules (the tables, dumps read into them, batches in workers).
C_TESTS := tests/tables tests/dumps

# The C modules built with AddressSanitizer and UBSan (into .venv/sanitized/, the usual build
# untouched) and C_TESTS run under both, then gcov's line coverage of the C:
# tools/test_sanitize.py. .ci/run runs it after `make test`.
test-sanitize: $(STAMP)
	$(BIN)/python tools/test_sanitize.py -n 2 $(C_TESTS)

# The C modules' own tests on the other CPythons dims supports (pyenv's on this project's
# machines), each in its own venv .venv/py<version>: tools/test-versions.sh. .ci/run runs it.
C_MODULE_TESTS := tests/tables/test_gather.py tests/tables/test_gather_safety.py \
	tests/tables/test_columnar.py tests/tables/test_compiled_lane.py
OTHER_PYTHONS := 3.12 3.13
test-versions:
	tools/test-versions.sh $(OTHER_PYTHONS) -- -n 2 $(C_MODULE_TESTS)

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
	$(BIN)/uv pip install -q --python $(BIN)/python -c requirements.lock -e '.[dev,lab]'
	$(BIN)/jupyter lab notebooks/ $$([ "$$(id -u)" = 0 ] && echo --allow-root)

venv: $(STAMP)

# Set up by tools/setup-venv.sh (uv into .venv, then the pinned packages), one line a step.
$(PRODUCT): pyproject.toml requirements.lock hatch_build.py openapi.yaml tools/setup-venv.sh \
		$(wildcard analysis/*/*.[ch])
	@VENV=$(VENV) PYTHON=$(PYTHON) tools/setup-venv.sh product
	@touch $(PRODUCT)

$(STAMP): $(PRODUCT) tools/spark-s3a-jars.txt tools/focus-validator.txt \
		tools/focus-validator-2.txt tools/focus-validator.sh
	@VENV=$(VENV) PYTHON=$(PYTHON) tools/setup-venv.sh dev
	@touch $(STAMP)

$(DOCS_STAMP): $(PRODUCT)
	@VENV=$(VENV) PYTHON=$(PYTHON) tools/setup-venv.sh docs
	@touch $(DOCS_STAMP)

clean:
	rm -rf $(VENV) dims-data dims-demo .pytest_cache .ruff_cache .hypothesis .site
