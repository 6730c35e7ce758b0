"""The Amp CLI backend and everything Amp-specific: its `-x --stream-json` events, errors and limits.

Kept free of imports so a reader of one part (the monitor's activity lines) does not load the others.
"""
