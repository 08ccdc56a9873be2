#!/usr/bin/env bash
# Usage: tools/focus-validator.sh DEST — makes DEST a venv holding the FOCUS validator
# (`DEST/bin/python -m focus_validator.main`; the venv is built elsewhere and moved, so its
# scripts' first lines name the old place) at the versions tools/focus-validator.txt pins, for
# tests/reports/test_focus.py. Its own venv: focus-validator 1.0.0 needs Python 3.11 and
# older pyarrow and multimethod than dims's. Built in a temporary folder first, so DEST is
# whole or absent; a DEST made from the same pins is kept as it is.
set -euo pipefail
dest=${1:?usage: tools/focus-validator.sh DEST}
here="$(cd "$(dirname "$0")" && pwd)"
pins="$here/focus-validator.txt"
if [ -x "$dest/bin/python" ] && cmp -s "$pins" "$dest/pins.txt"; then
  exit 0
fi
python=${PYTHON:-python3}
if ! "$python" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
  python=$(command -v python3.11 || true)
fi
if [ -z "$python" ]; then
  echo "focus-validator: needs Python 3.11 (PYTHON or python3.11 on PATH); not installed" >&2
  exit 1
fi
work="$dest.partial"
rm -rf "$work"
trap 'rm -rf "$work"' EXIT
"$python" -m venv "$work"
uv="$(dirname "$dest")/bin/uv"
if [ -x "$uv" ]; then
  "$uv" pip install --quiet --python "$work/bin/python" -r "$pins"
else
  "$work/bin/python" -m pip install -q --disable-pip-version-check -r "$pins"
fi
cp "$pins" "$work/pins.txt"
rm -rf "$dest"
mv "$work" "$dest"
