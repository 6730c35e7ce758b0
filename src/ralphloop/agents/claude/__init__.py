"""The Claude Code backend and everything Claude-specific: its stream-json events, errors and usage limits.

Kept free of imports so a reader of one part (the monitor's activity lines) does not load the others.
"""
