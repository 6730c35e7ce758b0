"""`python -m ralphloop` is `ralph`."""

from ralphloop.cli.main import entry

entry()
