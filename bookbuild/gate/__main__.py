"""``python -m bookbuild.gate add-page-records [PROFILE]``: add the page sections to old
baselines."""

import sys

from bookbuild import gate
from bookbuild.execute import engine

if sys.argv[1:2] != ["add-page-records"]:
    sys.exit("usage: python -m bookbuild.gate add-page-records [PROFILE]")
sys.exit(gate.add_page_records(engine.ROOT, *sys.argv[2:3]))
