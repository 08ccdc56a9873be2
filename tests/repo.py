"""Where the repository and the tests' data are, for tests in any folder below tests/."""

from pathlib import Path

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
DATA = ROOT / "tests" / "data"
