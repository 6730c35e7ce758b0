"""The opencode CLI backend and everything opencode-specific: its `run --format json` events, the error log lines
it prints with `--print-logs`, its permissions, errors and usage limits.

Kept free of imports so a reader of one part (the monitor's activity lines) does not load the others.
"""
