"""Loops as durable work on a Temporal server (issue 37, docs/scale.md): `ralph worker` runs story loops and merges
on any machine that reaches the server; `ralph run --parallel N --temporal HOST:PORT` starts (or attaches to) the
feature's workflow, the coordinator made durable. Imported only by those commands (the `temporal` extra)."""
