"""`python -m agents.cli`: the `nertz` command."""
import sys

from . import main

sys.exit(main())
