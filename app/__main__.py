"""`python -m app` does what the `trove` command does."""

import sys

from app.cli import main

sys.exit(main())
