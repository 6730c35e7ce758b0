"""Settings: layered config files, variables and flags with their provenance, and the run's policy."""
