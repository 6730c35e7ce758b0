"""`python -m ralphloop` is `ralph`."""

from ralphloop.launch import entry

entry()
