"""The Gemini CLI backend and everything Gemini-specific: its stream-json events, errors, quota limits and prices.

Kept free of imports so a reader of one part (the monitor's activity lines) does not load the others.
"""
