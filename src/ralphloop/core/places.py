"""Where a problem is, on one line: light (no imports), for `ralph status` as for `ralph validate`."""


def placed(path: str, line: int, message: str) -> str:
    """`path:line: message`, or `path: message` when no line applies (`line` 0)."""
    where = f"{path}:{line}" if line else path
    return f"{where}: {message}"
