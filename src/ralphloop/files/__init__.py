"""Reading files anyone could have put in ralph's way: size-capped, never through a FIFO, YAML as data."""
