"""The live monitor: reads a feature's state files only (never the engine) and draws them."""
