"""`python -m tui` is the same as the `firsttoken` command."""

import sys

from tui.cli import main

if __name__ == "__main__":
    sys.exit(main())
