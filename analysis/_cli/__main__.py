"""`python -m dims._cli …` runs the `dims` command line."""

import sys

from . import main

sys.exit(main())
