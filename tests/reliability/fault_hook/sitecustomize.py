"""Python imports `sitecustomize` at start-up from its path: a child process started with
this folder (and the repository) on PYTHONPATH gets the catalog faults that
TROVE_TEST_FAULTS describes, before the CLI runs (see tests/reliability/faults.py)."""

import os

if os.environ.get("TROVE_TEST_FAULTS"):
    from tests.reliability.faults import install_from_env

    install_from_env()
