"""``python -m cadsr_sklearn``: the same as the ``cadsr`` command."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
