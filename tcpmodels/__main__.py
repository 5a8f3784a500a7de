"""``python -m tcpmodels`` is the ``tcpmodels`` command."""

from tcpmodels.cli import main

raise SystemExit(main())
