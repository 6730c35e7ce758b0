"""The aider backend and everything aider-specific: its command line, its plain-text output, errors and account.

Kept free of imports so a reader of one part (the monitor's activity lines) does not load the others.
"""
