#!/usr/bin/env bash
# `make test-versions`: the C modules built, and the tests that drive them run, on each other
# CPython dims supports (pyproject.toml's requires-python; `make test` runs the whole suite
# on the default python3). Each version gets its own venv, .venv/py<version>, with the
# product (with the extras make demo installs) and the test tools pinned by
# requirements.lock; pip builds the C modules in place beside the default Python's (each file
# is named for its Python).
#
# An interpreter is python<version> on PATH, else pyenv's (this machine image has 3.12 and
# 3.13 under pyenv). Where one is missing the run says so loudly and goes on: a machine
# without it cannot test it, and that is no defect of the change being tested.
#   tools/test-versions.sh VERSION... -- PYTEST_ARGS...
set -euo pipefail
cd "$(dirname "$0")/.."

versions=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do versions+=("$1"); shift; done
[ $# -gt 0 ] && shift  # the pytest arguments follow --

find_python() {  # the interpreter of CPython $1, or nothing
  local version=$1 candidate
  for candidate in "$(command -v "python$version" 2>/dev/null || true)" \
      "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$version".*/bin/"python$version"; do
    if [ -x "$candidate" ] && "$candidate" -c 'import sys' >/dev/null 2>&1; then
      echo "$candidate"
      return
    fi
  done
}

status=0
for version in "${versions[@]}"; do
  python=$(find_python "$version")
  if [ -z "$python" ]; then
    echo "test-versions: WARNING: no CPython $version on this machine: not tested here" >&2
    continue
  fi
  venv=.venv/py$version
  [ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
  echo "test-versions: $("$venv/bin/python" --version) ($python)"
  "$venv/bin/python" -m pip install -q -c requirements.lock -e '.[sandbox,sql]' \
    pytest pytest-xdist pytest-timeout hypothesis hypothesis-jsonschema
  "$venv/bin/python" -m pytest "$@" || status=1
done
exit $status
