#!/usr/bin/env bash
# Usage: tools/setup-venv.sh product|docs|dev — sets up .venv for `make demo` (product: dims,
# what it needs and the sandbox and sql extras), for `make docs` (docs: the docs tools beside
# it) or for the other targets (dev: the test tools too), one line a step.
#
# Why uv: it installs the same pinned packages (requirements.lock as constraints) as pip
# would, several times sooner (parallel downloads, no per-package resolver passes; measured
# in the README's "The two commands"). uv itself comes from PyPI into .venv, pinned by the
# lock; where it cannot be installed, pip does the work and the line says so.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:?usage: tools/setup-venv.sh product|docs|dev}
python=${PYTHON:-python3}
venv=${VENV:-.venv}
bin=$venv/bin

now() { date +%s.%N; }
step() {  # step "what it does" command...: runs the command, then one line with its time
  local label=$1 started
  shift
  started=$(now)
  "$@"
  awk -v label="$label" -v a="$started" -v b="$(now)" \
    'BEGIN { printf "setup: %s (%.1f s)\n", label, b - a }'
}

install() {  # install ARGS...: with uv when it is there, else with pip
  if [ -x "$bin/uv" ]; then
    "$bin/uv" pip install --quiet --python "$bin/python" --compile-bytecode \
      -c requirements.lock "$@"
  else
    "$bin/python" -m pip install -q -c requirements.lock "$@"
  fi
}

if [ ! -x "$bin/python" ]; then
  step "made $venv with $("$python" --version 2>&1)" "$python" -m venv "$venv"
fi
if [ ! -x "$bin/uv" ]; then
  if ! step "installed uv into $venv" \
      "$bin/python" -m pip install -q --disable-pip-version-check -c requirements.lock uv; then
    echo "setup: uv could not be installed; pip installs the packages (slower)" >&2
  fi
fi
case $what in
  product)
    step "installed dims and what it needs (and the extras make demo runs)" \
      install -e '.[sandbox,sql]' ;;
  docs)
    step "installed the docs tools (mkdocs and its plugins)" install -e '.[docs]' ;;
  dev)
    step "installed the test and development tools" install -e '.[dev]'
    step "fetched the jars Spark needs for s3a:// (tests/storage/test_spark.py)" \
      env PYTHON="$bin/python" tools/spark-s3a-jars.sh "$venv/spark-jars"
    step "installed FOCUS validator 1.0.0 into $venv/focus-validator (tests/reports/test_focus.py)" \
      env PYTHON="$python" tools/focus-validator.sh "$venv/focus-validator"
    step "installed FOCUS validator 2.2.1 into $venv/focus-validator-2 (tests/reports/test_focus.py)" \
      env PYTHON="$python" tools/focus-validator.sh "$venv/focus-validator-2" \
      tools/focus-validator-2.txt ;;
  *)
    echo "usage: tools/setup-venv.sh product|docs|dev" >&2
    exit 2 ;;
esac
