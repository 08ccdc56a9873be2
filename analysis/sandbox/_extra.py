"""Imported first by the package: the sandbox's web server is the `sandbox` extra, so a
missing one is one line (`pip install 'dims[sandbox]'`) before any import fails on it."""

from .._extras import require

require("sandbox", "dims.sandbox")
