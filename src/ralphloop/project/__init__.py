"""Where a project's files live (the root, the feature folder, ralph's own files) and its archive."""
