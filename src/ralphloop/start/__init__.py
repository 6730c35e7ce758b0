"""Starting a run: the run assembled from settings, its preflight problems, and the last run reconciled."""
