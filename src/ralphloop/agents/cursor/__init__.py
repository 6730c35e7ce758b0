"""The Cursor CLI backend (`cursor-agent`) and everything Cursor-specific: its stream-json events and errors.

Kept free of imports so a reader of one part (the monitor's activity lines) does not load the others.
"""
