"""The GitHub Copilot CLI backend and everything Copilot-specific: its `--output-format json` events, errors,
usage limits, and the usage file it writes for ralph.

Kept free of imports so a reader of one part (the monitor's activity lines) does not load the others.
"""
