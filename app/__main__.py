"""`python -m app` does what the `trove` command does."""

import multiprocessing
import sys

from app.main import main

if __name__ == "__main__":
    # Readers run in worker processes; a frozen build must let them start.
    multiprocessing.freeze_support()
    sys.exit(main())
