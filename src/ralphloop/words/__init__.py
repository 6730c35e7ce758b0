"""How ralph words things for humans, the same on every surface, and agent text made safe to show."""
