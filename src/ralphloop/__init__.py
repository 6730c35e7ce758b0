"""ralphloop: run a coding-agent CLI in a loop until the work is verifiably done."""

__version__ = "0.1.0"
