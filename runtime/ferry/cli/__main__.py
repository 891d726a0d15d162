"""``python -m ferry.cli``: the same as the ``ferry`` command."""

import sys

from ferry.cli import main

sys.exit(main())
