"""Error lines by form, normalising and fingerprints, and the one error of an iteration."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ralphloop.analysis.fingerprint import MAX_LINE, error_lines, fingerprint, iteration_error, normalise

# ------------------------------------------------------------------ real outputs → their error

PYTEST = """\
============================= test session starts ==============================
platform linux -- Python 3.12.1, pytest-8.0.0, pluggy-1.4.0
rootdir: /tmp/pytest-of-dev/pytest-7/proj0
collected 3 items

tests/test_parse.py .F.                                                  [100%]

=================================== FAILURES ===================================
_________________________________ test_number __________________________________

    def test_number():
>       assert parse("4") == 5
E       AssertionError: assert 4 == 5
E        +  where 4 = parse('4')

tests/test_parse.py:7: AssertionError
=========================== short test summary info ============================
FAILED tests/test_parse.py::test_number - AssertionError: assert 4 == 5
========================= 1 failed, 2 passed in 0.12s ==========================
"""
PYTEST_COLLECTION = """\
==================================== ERRORS ====================================
____________________ ERROR collecting tests/test_cli.py ________________________
ImportError while importing test module '/work/proj/tests/test_cli.py'.
E   ModuleNotFoundError: No module named 'click'
=========================== short test summary info ============================
ERROR tests/test_cli.py
!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
"""
PYTHON_TRACEBACK = """\
Starting the importer...
Traceback (most recent call last):
  File "/home/dev/proj/run.py", line 12, in <module>
    main()
  File "/home/dev/proj/run.py", line 8, in main
    error: int = int(value)
                 ^^^^^^^^^^
ValueError: invalid literal for int() with base 10: 'abc'
"""
CHAINED_TRACEBACK = """\
Traceback (most recent call last):
  File "/app/config.py", line 4, in load
    return data["port"]
KeyError: 'port'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/app/main.py", line 9, in <module>
    load()
  File "/app/config.py", line 6, in load
    raise RuntimeError("no port configured") from None
RuntimeError: no port configured
"""
INTERRUPTED = """\
Traceback (most recent call last):
  File "/app/loop.py", line 3, in <module>
    time.sleep(10)
KeyboardInterrupt
"""
TSC = """\
src/index.ts(14,7): error TS2322: Type 'string' is not assignable to type 'number'.
Found 1 error in src/index.ts:14
"""
TSC_PRETTY = """\
src/app.ts:3:5 - error TS2345: Argument of type 'number' is not assignable to parameter of type 'string'.

3     greet(42);
      ~~~~~~~~~

Found 1 error in src/app.ts:3
"""
RUSTC = """\
   Compiling demo v0.1.0 (/home/dev/demo)
error[E0308]: mismatched types
 --> src/main.rs:2:18
  |
2 |     let x: i32 = "hello";
  |            ---   ^^^^^^^ expected `i32`, found `&str`
  |            |
  |            expected due to this

For more information about this error, try `rustc --explain E0308`.
error: could not compile `demo` (bin "demo") due to 1 previous error
"""
NPM_404 = """\
npm ERR! code E404
npm ERR! 404 Not Found - GET https://registry.npmjs.org/left-padd - Not found
npm ERR! 404
npm ERR! 404  'left-padd@*' is not in this registry.
npm ERR! 404
npm ERR! 404 Note that you can also install from a
npm ERR! 404 tarball, folder, http url, or git repo.

npm ERR! A complete log of this run can be found in:
npm ERR!     /root/.npm/_logs/2024-03-01T10_11_12_131Z-debug-0.log
"""
NPM_ENOENT = """\
npm error code ENOENT
npm error syscall open
npm error path /work/app/package.json
npm error errno -2
npm error enoent Could not read package.json: Error: ENOENT: no such file or directory, open '/work/app/package.json'
npm error enoent This is related to npm not being able to find a file.
npm error enoent
npm error A complete log of this run can be found in: /root/.npm/_logs/2024-03-01T10_11_12_131Z-debug-0.log
"""
GO_PANIC = """\
panic: runtime error: index out of range [5] with length 3

goroutine 1 [running]:
main.main()
\t/tmp/sandbox123/prog.go:8 +0x1d
exit status 2
"""
GO_TEST = """\
--- FAIL: TestAdd (0.00s)
    add_test.go:8: got 1, want 2
FAIL
FAIL\texample.com/calc\t0.004s
"""
BASH = "$ ./run.sh\n./run.sh: line 3: pyhton: command not found\n"
GIT = "$ git status\nfatal: not a git repository (or any of the parent directories): .git\n"
GCC = """\
main.c: In function 'main':
main.c:4:5: error: 'x' undeclared (first use in this function)
    4 |     x = 1;
      |     ^
make: *** [Makefile:2: all] Error 1
"""
MYPY = 'src/app/core.py:12: error: Incompatible return value type (got "int", expected "str")  [return-value]\n'
SEGFAULT = "bash: line 1: 48213 Segmentation fault      (core dumped) ./a.out\n"
COLOURED = "\x1b[1m\x1b[31merror\x1b[0m\x1b[1m: cannot find value `y` in this scope\x1b[0m\n"


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        (PYTEST, "FAILED tests/test_parse.py::test_number - AssertionError: assert 4 == 5"),
        (PYTEST_COLLECTION, "ERROR tests/test_cli.py"),
        (PYTHON_TRACEBACK, "ValueError: invalid literal for int() with base 10: 'abc'"),
        (CHAINED_TRACEBACK, "RuntimeError: no port configured"),
        (INTERRUPTED, "KeyboardInterrupt"),
        (TSC, "src/index.ts(14,7): error TS2322: Type 'string' is not assignable to type 'number'."),
        (
            TSC_PRETTY,
            "src/app.ts:3:5 - error TS2345: Argument of type 'number' is not assignable to parameter of type 'string'.",
        ),
        (RUSTC, "error[E0308]: mismatched types"),
        (NPM_404, "npm ERR! 404  'left-padd@*' is not in this registry."),
        (
            NPM_ENOENT,
            "npm error enoent Could not read package.json: Error: ENOENT: no such file or directory, open"
            " '/work/app/package.json'",
        ),
        (GO_PANIC, "panic: runtime error: index out of range [5] with length 3"),
        (GO_TEST, "--- FAIL: TestAdd (0.00s)"),
        (BASH, "./run.sh: line 3: pyhton: command not found"),
        (GIT, "fatal: not a git repository (or any of the parent directories): .git"),
        (GCC, "main.c:4:5: error: 'x' undeclared (first use in this function)"),
        (MYPY, MYPY.strip()),
        (SEGFAULT, SEGFAULT.strip()),
        (COLOURED, "error: cannot find value `y` in this scope"),
    ],
)
def test_the_error_of_real_output(output: str, expected: str) -> None:
    assert expected in error_lines(output)
    assert iteration_error(failed=None, tool_errors=[], text=output) == expected


def test_a_traceback_counts_once_as_its_last_line() -> None:
    # The frame's source line "error: int = int(value)" is inside the traceback: not an error line of its own.
    assert error_lines(PYTHON_TRACEBACK) == ["ValueError: invalid literal for int() with base 10: 'abc'"]
    assert error_lines(CHAINED_TRACEBACK) == ["KeyError: 'port'", "RuntimeError: no port configured"]


def test_a_traceback_cut_short_is_its_header() -> None:
    assert error_lines('Traceback (most recent call last):\n  File "/a.py", line 1, in <module>\n') == [
        "Traceback (most recent call last):"
    ]
    # a quoted header followed by prose: the header, and the prose is not an exception
    assert error_lines("Traceback (most recent call last):\nFixed it by checking the input.") == [
        "Traceback (most recent call last):"
    ]


def test_summaries_are_error_lines_but_not_the_iteration_error() -> None:
    assert error_lines(RUSTC)[-1] == 'error: could not compile `demo` (bin "demo") due to 1 previous error'
    assert error_lines(GCC)[-1] == "make: *** [Makefile:2: all] Error 1"
    assert error_lines(GO_TEST)[-1] == "FAIL\texample.com/calc\t0.004s"
    # with nothing else, a summary is the error
    only = "make: *** [all] Error 2\n"
    assert iteration_error(failed=None, tool_errors=[], text=only) == "make: *** [all] Error 2"


def test_npm_footer_is_not_an_error() -> None:
    lines = error_lines(NPM_404)
    assert not any("complete log" in line or "_logs" in line or "tarball" in line for line in lines)
    assert "npm ERR! 404" not in lines


@pytest.mark.parametrize(
    "line",
    [
        "Error: Cannot find module 'express'",
        "error: pathspec 'main2' did not match any file(s) known to git",
        "ERROR: Could not find a version that satisfies the requirement torch==9.9",
        "ERROR tests/test_a.py - ModuleNotFoundError: No module named 'a'",
        "error[E0425]: cannot find value `y` in this scope",
        "error TS5023: Unknown compiler option 'strictt'.",
        "fatal: pathspec 'x.txt' did not match any files",
        'FATAL: password authentication failed for user "app"',
        "fatal error: all goroutines are asleep - deadlock!",
        "ModuleNotFoundError: No module named 'requests'",
        "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)",
        "Exception: boom",
        "AssertionError",
        'TypeError [ERR_INVALID_ARG_TYPE]: The "path" argument must be of type string.',
        "Uncaught ReferenceError: foo is not defined",
        "java.lang.IllegalStateException: not started",
        'Exception in thread "main" java.lang.NullPointerException',
        "panic: assignment to entry in nil map",
        "thread 'main' panicked at src/main.rs:4:5:",
        'npm ERR! Missing script: "tset"',
        "E       assert 1 == 2",
        "FAILED tests/x.py::test_y - KeyError: 'id'",
        "FAIL: test_parse (tests.test_core.ParseTests.test_parse)",
        "Segmentation fault (core dumped)",
        "bash: foo: command not found",
        "zsh: command not found: foo",
        "/bin/sh: 1: ./build.sh: Permission denied",
        "cat: notes.txt: No such file or directory",
        "python3: can't open file '/work/app/mian.py': [Errno 2] No such file or directory",
        "collect2: error: ld returned 1 exit status",
        "[ERROR] Failed to execute goal on project app",
        "2024-03-01 10:11:12,131 ERROR worker crashed",
        "    error: expected expression",  # indented
        "\x1b[31mERROR\x1b[0m: build failed",  # coloured
    ],
)
def test_error_forms(line: str) -> None:
    assert len(error_lines(line)) == 1


@pytest.mark.parametrize(
    "prose",
    [
        "Added exception handling",
        "Fixed the error in parse()",
        "Handled errors gracefully",
        "Error handling improved",
        "Error handling: improved the retry logic",
        "No errors found",
        "0 errors, 0 warnings",
        "Errors: 0",
        "ERRORS: 0",
        "Error: none",
        "error: 0 errors",
        "- handle errors gracefully",
        "- Error: the build used to fail here",
        "* fixed the TypeError in parse()",
        "**Error:** explained in the README",
        "I fixed the TypeError: the value is now converted first.",
        "Build error was caused by a typo.",
        "Exception handling added to the importer",
        "The command not found case is handled now.",
        "Tests: 12 passed, 0 failed",
        "The error: was in the config loader",
        "FAILURES are now reported",
        "Made sure no such file or directory errors crash the loader",
        "npm ERR! A complete log of this run can be found in:",
    ],
)
def test_prose_is_not_an_error(prose: str) -> None:
    assert error_lines(prose) == []
    assert iteration_error(failed=None, tool_errors=[], text=prose) is None


def test_prose_around_an_error() -> None:
    reply = "Added exception handling.\nFixed the error in parse().\n$ pytest\nE   KeyError: 'id'\nNo errors found now."
    assert error_lines(reply) == ["E   KeyError: 'id'"]


def test_fences_are_not_special() -> None:
    assert error_lines("```\nerror: example\n```") == ["error: example"]


def test_limit_keeps_the_last_lines_stripped_and_cut() -> None:
    text = "\n".join(f"  error: number {n}  " for n in range(30))
    lines = error_lines(text, limit=3)
    assert lines == ["error: number 27", "error: number 28", "error: number 29"]
    assert len(error_lines(text)) == 20
    assert error_lines(text, limit=0) == []
    assert error_lines(text, limit=-1) == []
    long = "error: " + "x" * 2000
    assert error_lines(long) == [long[:MAX_LINE]]
    assert MAX_LINE == 500


def test_carriage_returns_split_lines() -> None:
    assert error_lines("progress 10%\rprogress 100%\rError: disk full\r\n") == ["Error: disk full"]


# ------------------------------------------------------------------ normalise and fingerprint


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # paths, temp dirs
        (
            "FileNotFoundError: [Errno 2] No such file or directory: '/tmp/tmpa8x2k1/config.yaml'",
            "FileNotFoundError: [Errno 2] No such file or directory: '/tmp/tmpq93mzz/config.yaml'",
        ),
        (
            "ERROR tests/test_a.py - ModuleNotFoundError: No module named 'x'",
            "ERROR ./other/test_b.py - ModuleNotFoundError: No module named 'x'",
        ),
        (
            "error: could not read C:\\Users\\dev\\AppData\\Local\\Temp\\tmp1\\a.txt",
            "error: could not read C:\\Users\\ci\\AppData\\Local\\Temp\\tmp2\\a.txt",
        ),
        ('File "/home/a/proj/x.py", line 42, in main', 'File "/srv/build/x.py", line 7, in main'),
        # line numbers and columns
        (
            "src/index.ts(14,7): error TS2322: Type 'string' is not assignable to type 'number'.",
            "src/index.ts(21,3): error TS2322: Type 'string' is not assignable to type 'number'.",
        ),
        ("main.c:4:5: error: 'x' undeclared", "main.c:40:12: error: 'x' undeclared"),
        ("app.py:12: error: Incompatible types", "app.py:98: error: Incompatible types"),
        # timestamps
        (
            "2024-03-01T10:11:12.131Z ERROR worker crashed: connection reset",
            "2025-11-30T01:02:03Z ERROR worker crashed: connection reset",
        ),
        ("[12:34:56] Error: disk full", "[01:02:03] Error: disk full"),
        ("Error at 2024-03-01: disk full", "Error at 2024-12-31: disk full"),
        # pids, hex ids, shas, uuids
        ("Error: process 4121 exited with signal 9", "Error: process 77 exited with signal 9"),
        ("panic: bad state at 0x7f3a2b1c", "panic: bad state at 0xc000012345"),
        ("fatal: bad object 3f2a9c1", "fatal: bad object 9e1d0b7c4a8f2e6d1c3b5a7f9e0d2c4b6a8f0e1d"),
        ("fatal: bad object abc1234", "fatal: bad object 1234567"),
        (
            "Error: session 123e4567-e89b-12d3-a456-426614174000 expired",
            "Error: session 9b2f1c3d-0000-4aaa-8bbb-ccccdddd1111 expired",
        ),
        # durations
        ("Error: timed out after 1.23s", "Error: timed out after 150ms"),
        ("FAILED tests/x.py::test_y - Failed: Timeout >30.0s", "FAILED tests/x.py::test_y - Failed: Timeout >2m30s"),
        # whitespace, case, escapes
        ("Error:   disk    full", "error: disk full"),
        ("\x1b[31mError\x1b[0m: disk full", "Error: disk full"),
        # a traceback's last line: the whole line differs only in a path and a number
        (
            "RuntimeError: worker /tmp/pytest-of-dev/pytest-12/w0 died after 3 retries",
            "RuntimeError: worker /tmp/pytest-of-dev/pytest-13/w1 died after 5 retries",
        ),
    ],
)
def test_same_error_fingerprints_equal(first: str, second: str) -> None:
    assert normalise(first) == normalise(second)
    assert fingerprint(first) == fingerprint(second)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (
            "ValueError: invalid literal for int() with base 10: 'x'",
            "TypeError: invalid literal for int() with base 10: 'x'",
        ),
        ("KeyError: 'id'", "IndexError: 'id'"),
        ("Error: disk full", "Error: permission denied"),
        ("ModuleNotFoundError: No module named 'requests'", "ModuleNotFoundError: No module named 'httpx'"),
        ("error TS2322: Type 'string' is not assignable", "error TS2345: Type 'string' is not assignable"),
        ("error[E0308]: mismatched types", "error[E0425]: mismatched types"),
        ("bash: pyhton: command not found", "bash: pytest: command not found"),
        ("FAILED tests/a.py::test_one - assert 1 == 2", "FAILED tests/a.py::test_two - assert 1 == 2"),
        ("npm ERR! 404  'left-padd@*' is not in this registry.", "npm ERR! 404  'lodahs@*' is not in this registry."),
        ("fatal: not a git repository", "fatal: not a git repository (or any parent)"),
    ],
)
def test_different_errors_fingerprint_differently(first: str, second: str) -> None:
    assert normalise(first) != normalise(second)
    assert fingerprint(first) != fingerprint(second)


def test_normalise_keeps_words_and_codes() -> None:
    assert normalise("ValueError: invalid literal for int() with base 10: 'x'") == (
        "valueerror: invalid literal for int() with base <n>: 'x'"
    )
    assert normalise("error[E0308] and TS2322 in v1.2.3 with utf8") == "error[e0308] and ts2322 in v1.2.3 with utf8"
    # a URL is not a path: its host and route stay
    assert normalise("GET https://registry.npmjs.org/left-padd failed") == (
        "get https://registry.npmjs.org/left-padd failed"
    )
    assert normalise('  File "/tmp/x/a.py", line 42\n') == 'file "<path>", line <n>'


def test_fingerprint_shape() -> None:
    value = fingerprint("Error: disk full")
    assert re.fullmatch(r"[0-9a-f]{16}", value)
    assert value == fingerprint("error: disk full")


# ------------------------------------------------------------------ the iteration's error


def test_structured_facts_come_first() -> None:
    text = "error: from the output"
    failed = "exit code 1: ModuleNotFoundError: No module named 'x'"
    assert iteration_error(failed=failed, tool_errors=["Error: tool"], text=text) == failed
    assert iteration_error(failed=None, tool_errors=["Error: first", "Error: last"], text=text) == "Error: last"
    assert iteration_error(failed=None, tool_errors=[], text=text) == "error: from the output"
    assert iteration_error(failed=None, tool_errors=[], text="All tests pass.") is None
    assert iteration_error(failed=None, tool_errors=[], text="") is None


def test_blank_facts_are_not_given() -> None:
    assert iteration_error(failed="  \n", tool_errors=["Error: tool", " "], text="error: text") == "Error: tool"
    assert iteration_error(failed="", tool_errors=["", "\n"], text="error: text") == "error: text"


def test_a_tool_error_with_output_is_its_error_line() -> None:
    bash_result = "Exit code 1\n" + PYTHON_TRACEBACK
    assert iteration_error(failed=None, tool_errors=[bash_result], text="") == (
        "ValueError: invalid literal for int() with base 10: 'abc'"
    )
    # one line without an error form is the error as it is; several lines become one
    assert iteration_error(failed=None, tool_errors=["String to replace not found in file."], text="") == (
        "String to replace not found in file."
    )
    assert iteration_error(failed=None, tool_errors=["File has not been read yet.\n  Read it first."], text="") == (
        "File has not been read yet. Read it first."
    )
    assert iteration_error(failed="x" * 2000, tool_errors=[], text="") == "x" * MAX_LINE


def test_the_same_failure_in_two_runs_has_one_fingerprint() -> None:
    run_one = PYTHON_TRACEBACK
    run_two = PYTHON_TRACEBACK.replace("/home/dev/proj", "/tmp/ralph-wt-8812").replace("line 12", "line 19")
    one = iteration_error(failed=None, tool_errors=[], text=run_one)
    two = iteration_error(failed=None, tool_errors=[], text=run_two)
    assert one is not None and two is not None
    assert fingerprint(one) == fingerprint(two)
    assert fingerprint(one) != fingerprint(iteration_error(failed=None, tool_errors=[], text=CHAINED_TRACEBACK) or "")


# ------------------------------------------------------------------ never raises


@given(text=st.text(), limit=st.integers(min_value=-5, max_value=50))
def test_error_lines_never_raise(text: str, limit: int) -> None:
    lines = error_lines(text, limit)
    assert len(lines) <= max(limit, 0)
    assert all(len(line) <= MAX_LINE and line == line.strip() and "\n" not in line for line in lines)


@given(text=st.text())
def test_normalise_and_fingerprint_never_raise(text: str) -> None:
    assert isinstance(normalise(text), str)
    assert re.fullmatch(r"[0-9a-f]{16}", fingerprint(text))


@given(failed=st.none() | st.text(), tool_errors=st.lists(st.text(), max_size=4), text=st.text())
def test_iteration_error_never_raises(failed: str | None, tool_errors: list[str], text: str) -> None:
    error = iteration_error(failed=failed, tool_errors=tool_errors, text=text)
    if error is not None:
        assert error.strip() and len(error) <= MAX_LINE and "\n" not in error
        assert re.fullmatch(r"[0-9a-f]{16}", fingerprint(error))


@given(
    lines=st.lists(
        st.sampled_from(
            [
                "Error: disk full",
                "Traceback (most recent call last):",
                '  File "/a.py", line 1',
                "ValueError: bad",
                "npm ERR! ",
                "bash: x: command not found",
                "Fixed the error",
                "",
                "\x1b[31m",
                "E   ",
                "FAIL",
            ]
        )
        | st.text(max_size=30),
        max_size=20,
    )
)
def test_error_like_text_never_raises(lines: list[str]) -> None:
    text = "\n".join(lines)
    error_lines(text)
    iteration_error(failed=None, tool_errors=lines, text=text)
    assert re.fullmatch(r"[0-9a-f]{16}", fingerprint(text))
