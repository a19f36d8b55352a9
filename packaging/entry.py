"""The frozen app's entry script: the `trove` command (window or CLI, see app.main).

freeze_support() runs first: the document readers run in `spawn` worker processes, and in a
frozen build each worker starts this same executable, which must turn into the worker here
instead of opening a window or parsing a command line.
"""

import multiprocessing
import sys

if __name__ == "__main__":
    multiprocessing.freeze_support()

    from app.main import main

    sys.exit(main())
