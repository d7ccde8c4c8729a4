"""``python -m ztwin.cli``: the ``ztwin`` command."""

import sys

from . import main

sys.exit(main())
