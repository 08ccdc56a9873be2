#!/usr/bin/env bash
# Usage: tools/focus-validator.sh DEST [PINS] — makes DEST a venv holding a FOCUS validator
# (`DEST/bin/python -m focus_validator.main`; the venv is built elsewhere and moved, so its
# scripts' first lines name the old place) at the versions PINS pins (default
# tools/focus-validator.txt), for tests/reports/test_focus.py. Two validators, each in its own
# venv apart from dims's: 1.0.0 (FOCUS 1.0; tools/focus-validator.txt) needs Python 3.11 and
# older pyarrow and multimethod than dims's; 2.2.1 (FOCUS 1.2; tools/focus-validator-2.txt)
# needs Python 3.12 or newer. PINS's first line says which Python (`# python: 3.11` or
# `# python: 3.12+`); PYTHON is used when it fits, else python3.X on PATH. Every package is
# pinned in PINS, so they are installed with --no-deps: exactly those, even where a pin
# overrides what a package declares (PINS says why). Built in a temporary folder first, so
# DEST is whole or absent; a DEST made from the same pins is kept as it is.
set -euo pipefail
dest=${1:?usage: tools/focus-validator.sh DEST [PINS]}
here="$(cd "$(dirname "$0")" && pwd)"
pins=${2:-"$here/focus-validator.txt"}
if [ -x "$dest/bin/python" ] && cmp -s "$pins" "$dest/pins.txt"; then
  exit 0
fi
wanted=$(sed -n '1s/^# python: //p' "$pins")
case $wanted in
  3.11) check='sys.version_info[:2] == (3, 11)'; names="python3.11"; glob="3.11" ;;
  3.12+) check='sys.version_info[:2] >= (3, 12)'; names="python3.13 python3.12"; glob="3.1[2-9]" ;;
  *) echo "focus-validator: $pins: its first line names no Python (# python: 3.11 or 3.12+)" >&2
     exit 1 ;;
esac
fits() { [ -n "$1" ] && "$1" -c "import sys; sys.exit(not ($check))" 2>/dev/null; }
python=${PYTHON:-python3}
if ! fits "$python"; then
  python=""
  # on PATH, else pyenv's own (its shim of a version not selected fails: `fits` says no)
  pyenv_root=${PYENV_ROOT:-$HOME/.pyenv}
  for candidate in $(for n in $names; do command -v "$n" || true; done) \
      $(ls -d "$pyenv_root"/versions/$glob*/bin/python3 2>/dev/null | sort -rV); do
    if fits "$candidate"; then python=$candidate; break; fi
  done
fi
if [ -z "$python" ]; then
  echo "focus-validator: needs Python $wanted (PYTHON, $names on PATH or in pyenv)" >&2
  exit 1
fi
work="$dest.partial"
rm -rf "$work"
trap 'rm -rf "$work"' EXIT
"$python" -m venv "$work"
uv="$(dirname "$dest")/bin/uv"
if [ -x "$uv" ]; then
  "$uv" pip install --quiet --python "$work/bin/python" --no-deps -r "$pins"
else
  "$work/bin/python" -m pip install -q --disable-pip-version-check --no-deps -r "$pins"
fi
cp "$pins" "$work/pins.txt"
rm -rf "$dest"
mv "$work" "$dest"
