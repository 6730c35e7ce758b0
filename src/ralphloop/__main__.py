"""`python -m ralphloop` is `ralph`."""

from ralphloop.cli.launch import entry

entry()
