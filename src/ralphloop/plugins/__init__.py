"""The plug-in tables: ralph's agent backends and task formats by name, each part named by "module:name" and
imported only when a run uses it, so that `ralph --help` and `ralph status` read them for free."""
