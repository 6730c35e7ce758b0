"""The values and seams every layer shares: the engine's protocols, its events, the error users see, the exit codes."""
