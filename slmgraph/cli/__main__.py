"""``python -m slmgraph.cli``: the same entry point as the ``slmgraph`` command."""
import sys

from slmgraph.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
