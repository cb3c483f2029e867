"""`python -m allegra_lan` runs the same command line as `allegra`."""

from allegra_lan.cli import main

raise SystemExit(main())
