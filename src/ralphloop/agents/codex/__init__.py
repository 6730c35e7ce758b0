"""The Codex CLI backend and everything Codex-specific: its `exec --json` events, errors, usage limits and prices.

Kept free of imports so a reader of one part (the monitor's activity lines) does not load the others.
"""
