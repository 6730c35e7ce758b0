"""The layers of the package, as docs/architecture.md draws them, checked on the source: which package may
import which (directly or through others), and which do no I/O."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGE = SRC / "ralphloop"

# layer → the packages it must never reach, directly or through any module it imports
FORBIDDEN = {
    "ralphloop.monitor": ("ralphloop.engine", "ralphloop.cli", "ralphloop.build"),
    "ralphloop.records": ("ralphloop.engine", "ralphloop.cli", "ralphloop.build"),
    "ralphloop.report": ("ralphloop.engine", "ralphloop.cli", "ralphloop.build"),
    "ralphloop.web": ("ralphloop.engine", "ralphloop.cli", "ralphloop.build"),
    "ralphloop.state": ("ralphloop.engine", "ralphloop.cli", "ralphloop.build"),
    "ralphloop.tasks": ("ralphloop.engine", "ralphloop.cli", "ralphloop.build"),
    "ralphloop.hooks": ("ralphloop.engine", "ralphloop.cli", "ralphloop.build"),
    "ralphloop.agents": ("ralphloop.engine", "ralphloop.cli", "ralphloop.build"),
    "ralphloop.analysis": ("ralphloop.engine", "ralphloop.cli", "ralphloop.build", "ralphloop.agents"),
    "ralphloop.guards": ("ralphloop.engine", "ralphloop.cli", "ralphloop.build", "ralphloop.agents"),
    "ralphloop.engine": ("ralphloop.cli", "ralphloop.build"),
}
# Pure layers: no module of theirs imports what does I/O (files, processes, sockets, the clock's sleep).
NO_IO = ("ralphloop.analysis", "ralphloop.guards", "ralphloop.engine.decide", "ralphloop.engine.judge")
IO_MODULES = ("os", "io", "subprocess", "shutil", "pathlib", "socket", "tempfile", "select", "fcntl", "time")


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in PACKAGE.rglob("*.py")}


@cache
def imports(name: str) -> frozenset[str]:
    """Every module `name` imports anywhere in its source (type-only imports left out: they cost nothing)."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    type_only: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            type_only.update(id(child) for stmt in node.body for child in ast.walk(stmt))
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in type_only:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            base = node.module
            if node.level:  # relative: resolve against this module's package
                package = name.rsplit(".", node.level)[0]
                base = f"{package}.{base}"
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in MODULES)
    return frozenset(found)


@cache
def reached(name: str) -> frozenset[str]:
    """The ralphloop modules `name` imports, directly or through others."""
    seen: set[str] = set()
    stack = [name]
    while stack:
        current = stack.pop()
        for target in imports(current):
            if target in MODULES and target not in seen:
                seen.add(target)
                stack.append(target)
    return frozenset(seen)


def within(name: str, layer: str) -> bool:
    return name == layer or name.startswith(layer + ".")


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_a_layer_never_reaches_what_it_must_not(layer: str) -> None:
    broken = [
        f"{name} reaches {target}"
        for name in sorted(MODULES)
        if within(name, layer)
        for target in sorted(reached(name))
        if any(within(target, banned) for banned in FORBIDDEN[layer])
    ]
    assert broken == []


@pytest.mark.parametrize("layer", NO_IO)
def test_pure_layers_import_nothing_that_does_io(layer: str) -> None:
    broken = [
        f"{name} imports {target}"
        for name in sorted(MODULES)
        if within(name, layer)
        for target in sorted(imports(name))
        if target.split(".")[0] in IO_MODULES
    ]
    assert broken == []


def test_no_source_module_is_over_400_lines() -> None:
    long = {name: n for name, path in MODULES.items() if (n := len(path.read_text().splitlines())) > 400}
    assert long == {}


def test_the_engine_is_under_1300_lines() -> None:
    total = sum(
        len(path.read_text().splitlines()) for name, path in MODULES.items() if within(name, "ralphloop.engine")
    )
    assert total < 1300


def test_claude_specifics_stay_under_the_claude_backend() -> None:
    """Event parsing, usage-limit events, token kinds, activity lines: only agents/ imports agents/claude/."""
    broken = [
        f"{name} imports {target}"
        for name in sorted(MODULES)
        if not within(name, "ralphloop.agents")
        for target in sorted(imports(name))
        if within(target, "ralphloop.agents.claude")
    ]
    assert broken == []
