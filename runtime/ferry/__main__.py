"""``python -m ferry``: the same as the ``ferry`` command."""

import sys

from ferry._cli import main

sys.exit(main())
