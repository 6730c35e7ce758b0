"""The labelled analysis corpus (tests/fixtures/analysis/): every case's final text, analysed, says what its label says.

A case is `NAME.txt` (the agent's final text, byte-exact) or `NAME.log` (a saved agent output, turned into its
final text by ralphloop.agents.saved the way `ralph analyze` does), an optional `NAME.prompt.md`, and
`NAME.expected.json`: a subset of `Analysis.to_json()`, plus meta keys starting with `_`:
`_format` (what saved.detect must say), `_final_text` (the text it must extract), `_xfail` (a known src bug).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from ralphloop.agents import saved
from ralphloop.analysis.signals import analyze

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "analysis"
HEAD_BYTES = 64 * 1024
CHUNK = 4096
TO_JSON_KEYS = set(analyze("").to_json())


def load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_corpus", CORPUS / "make_corpus.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    writes_bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True  # no __pycache__ among the fixtures
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = writes_bytecode
    return module


def case_names() -> list[str]:
    return sorted(path.name.removesuffix(".expected.json") for path in CORPUS.glob("*.expected.json"))


def params() -> list[Any]:
    result = []
    for name in case_names():
        expected = json.loads((CORPUS / f"{name}.expected.json").read_text(encoding="utf-8"))
        reason = expected.get("_xfail")
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        result.append(pytest.param(name, id=name, marks=marks))
    return result


def final_text_of(name: str, expected: dict[str, Any]) -> str:
    txt, log = CORPUS / f"{name}.txt", CORPUS / f"{name}.log"
    if txt.exists():
        assert not log.exists(), f"{name}: both .txt and .log"
        assert "_format" not in expected, f"{name}: _format is for .log cases"
        return txt.read_bytes().decode("utf-8", errors="replace")
    data = log.read_bytes()
    fmt = saved.detect(data[:HEAD_BYTES])
    if "_format" in expected:
        assert fmt == expected["_format"], f"{name}: detected {fmt}"
    text = saved.final_text((data[i : i + CHUNK] for i in range(0, len(data), CHUNK)), fmt)
    if "_final_text" in expected:
        assert text == expected["_final_text"]
    return text


@pytest.mark.parametrize("name", params())
def test_corpus_case(name: str) -> None:
    expected = json.loads((CORPUS / f"{name}.expected.json").read_text(encoding="utf-8"))
    prompt_file = CORPUS / f"{name}.prompt.md"
    prompt = prompt_file.read_text(encoding="utf-8") if prompt_file.exists() else ""
    analysis = analyze(final_text_of(name, expected), prompt)
    actual = analysis.to_json()
    json.dumps(actual)  # the shape `ralph analyze --json` prints
    checked = {key: value for key, value in expected.items() if not key.startswith("_")}
    assert checked, f"{name}: expects nothing"
    unknown = set(checked) - TO_JSON_KEYS
    assert not unknown, f"{name}: not to_json() keys: {unknown}"
    assert {key: actual[key] for key in checked} == checked
    # the heuristics never make a claim: only the named sources do
    assert actual["completion_claimed"] == bool(actual["claim_sources"])


def test_corpus_is_large_and_covers_every_kind() -> None:
    names = case_names()
    assert len(names) >= 100
    assert sum((CORPUS / f"{name}.log").exists() for name in names) >= 10
    assert sum((CORPUS / f"{name}.prompt.md").exists() for name in names) >= 5
    assert {name.split("_")[0] for name in names} >= {"promise", "status", "ralph", "legacy", "json", "prompt"}


def test_every_corpus_file_belongs_to_a_case() -> None:
    names = set(case_names())
    for path in CORPUS.iterdir():
        if path.name in ("README.md", "make_corpus.py", "__pycache__"):
            continue
        stem = path.name.split(".", 1)[0]
        assert stem in names, f"{path.name} has no expected.json"
    for name in names:
        assert (CORPUS / f"{name}.txt").exists() or (CORPUS / f"{name}.log").exists(), name


def test_readme_names_the_origin_of_every_log() -> None:
    readme = (CORPUS / "README.md").read_text(encoding="utf-8")
    for path in CORPUS.glob("*.log"):
        assert path.name in readme, f"README.md does not name {path.name}"


def test_committed_files_match_the_generator() -> None:
    """make_corpus.py is the readable source of the byte-exact cases: the committed files must be its output."""
    generator = load_generator()
    for name, (text, prompt, expected) in generator.CASES.items():
        data = text if isinstance(text, bytes) else text.encode()
        assert (CORPUS / f"{name}.txt").read_bytes() == data, name
        prompt_path = CORPUS / f"{name}.prompt.md"
        if prompt is None:
            assert not prompt_path.exists(), name
        else:
            assert prompt_path.read_bytes() == prompt.encode(), name
        assert (CORPUS / f"{name}.expected.json").read_bytes() == generator.expected_bytes(expected), name
    for name, data in generator.derived_logs().items():
        assert (CORPUS / f"{name}.log").read_bytes() == data, name
    for name, expected in {**generator.DERIVED_EXPECTED, **generator.CAPTURE_EXPECTED}.items():
        assert (CORPUS / f"{name}.expected.json").read_bytes() == generator.expected_bytes(expected), name
