"""Start-up: what `dims --help` and a bare `import` of the CLI cost, whole process.

Baseline: the interpreter alone (`python -c pass`). The CLI should import only what the
command at hand uses: `--help` needs argparse and the spec's filter list, not httpx,
pandas or pyarrow. Also reports which heavy modules `import dims._cli` pulls in.
"""

from __future__ import annotations

import functools
import subprocess
import sys
from typing import Any

from .timing import ROOT, measure_interleaved, python, save, table

HEAVY = ("httpx", "pandas", "pyarrow", "duckdb", "matplotlib", "msgspec", "generated_client")
_LOADED = "import sys, dims._cli; print(' '.join(sorted(m for m in {} if m in sys.modules)))"


def run(runs: int = 7) -> dict[str, Any]:
    timings = measure_interleaved(
        [
            ("python -c pass (interpreter alone)", functools.partial(python, "-c", "pass"), runs),
            ("python -c 'import dims._cli'",
             functools.partial(python, "-c", "import dims._cli"), runs),
            ("dims --help", functools.partial(python, "-m", "dims._cli", "--help"), runs),
        ]
    )  # fmt: skip
    loaded = subprocess.run(
        [sys.executable, "-c", _LOADED.format(HEAVY)],
        check=True, cwd=ROOT, capture_output=True, text=True,
    ).stdout.split()  # fmt: skip
    base, imported, helped = timings
    result: dict[str, Any] = {
        "timings": timings,
        "import_cli_s": imported.median_s - base.median_s,
        "help_s": helped.median_s - base.median_s,
        "heavy_modules_imported_by_cli": loaded,
    }
    print(table(timings))
    print(
        f"  import dims._cli adds {result['import_cli_s'] * 1000:.0f} ms, dims --help "
        f"{result['help_s'] * 1000:.0f} ms to the interpreter's start; heavy modules it "
        f"imports: {', '.join(loaded) or 'none'}\n"
    )
    save("startup", result)
    return result


if __name__ == "__main__":
    run()
