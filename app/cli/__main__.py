"""`python -m app.cli ...`: the commands without the window's launcher."""

import sys

from app.cli.entry import main

sys.exit(main())
