"""`python -m hudi_ds.cli`: the same as the `hudi-py` command."""

import sys

from hudi_ds.cli.app import main

sys.exit(main())
