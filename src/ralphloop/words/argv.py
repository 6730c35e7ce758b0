"""A command line's words less some of its flags: the rest of the user's own command, for a command ralph prints
(the same agent, limits and options as the run they typed)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence


def without(words: Sequence[str], *flags: str) -> list[str]:
    """`words` less each of `flags` and its value, in every spelling argparse takes: `-s X`, `-sX`, `--story X`,
    `--story=X`, and an abbreviation (`--sto X`)."""
    shorts = [flag for flag in flags if not flag.startswith("--")]
    longs = [flag for flag in flags if flag.startswith("--")]
    kept: list[str] = []
    words = list(words)
    index = 0
    while index < len(words):
        word = words[index]
        name, equals, _ = word.partition("=")
        if word == "--":  # what follows is positional: kept as it is
            return kept + words[index:]
        if name.startswith("--") and len(name) > 2 and any(flag.startswith(name) for flag in longs):
            index += 1 if equals else 2
        elif word in shorts:
            index += 2
        elif any(word.startswith(flag) and len(word) > len(flag) for flag in shorts) and not word.startswith("--"):
            index += 1
        else:
            kept.append(word)
            index += 1
    return kept


def run_flags(argv: Sequence[str], target: str | None) -> list[str]:
    """`ralph run`'s words (`argv` from `run` on) but `run` and the workspace (FEATURE, -f): its flags, and
    ITERATIONS if given. A printed command names the workspace its own way, one that works from anywhere."""
    words = without(argv[1:], "-f", "--feature")
    if target in words:
        words.remove(target)
    return words
