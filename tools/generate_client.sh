#!/usr/bin/env bash
# Generate the client package from openapi.yaml into the folder given (default:
# generated_client). `make generate` and tests/test_generated_client.py both run this, so
# the committed tree and the check use one command. tools/client-templates/ adds, per API
# tag, public request builders (`<operation>_request_kwargs`) for the fetch layer. The pinned generator and ruff come
# from .venv (pyproject.toml pins both); the post-hooks run ruff --isolated.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-"$root/generated_client"}
bin="$root/.venv/bin"
rm -rf "$out"
PATH="$bin:$PATH" "$bin/openapi-python-client" generate \
  --path "$root/openapi.yaml" --config "$root/openapi-python-client.yaml" \
  --meta none --output-path "$out" --fail-on-warning \
  --custom-template-path "$root/tools/client-templates" >/dev/null
rm -rf "$out/.ruff_cache"
find "$out" -name __pycache__ -type d -prune -exec rm -rf {} +
