"""error_line: the line of a crashed CLI's output that says why, from real-shaped stderr."""

from __future__ import annotations

from ralphloop.agents.error_line import MAX_CHARS, error_line
from ralphloop.agents.text import describe_failure
from ralphloop.core.protocols import ProcessOutcome

# Node 22's uncaught error: the throw site, the error, its stack, its fields, then Node's version.
NODE_ENOSPC = """\
node:internal/fs/utils:347
    throw err;
    ^

Error: ENOSPC: no space left on device, write
    at Object.writeSync (node:fs:936:3)
    at Object.writeFileSync (node:fs:2385:26)
    at file:///usr/lib/node_modules/@anthropic-ai/claude-code/cli.js:1:42 {
  errno: -28,
  code: 'ENOSPC',
  syscall: 'write'
}

Node.js v22.11.0
"""

# An uncaught TypeError: the message over its stack, without an "Error:" of its own.
NODE_TYPE_ERROR = """\
(node:4242) ExperimentalWarning: The Fetch API is an experimental feature.
(Use `node --trace-warnings ...` to show where the warning was created)
file:///usr/lib/node_modules/some-cli/dist/index.js:88
        return config.model.name;
                            ^

TypeError: Cannot read properties of undefined (reading 'name')
    at loadModel (file:///usr/lib/node_modules/some-cli/dist/index.js:88:29)
    at async main (file:///usr/lib/node_modules/some-cli/dist/index.js:12:5)

Node.js v20.18.0
"""

PYTHON_TRACEBACK = """\
WARNING: no config file, using defaults
Traceback (most recent call last):
  File "/usr/lib/python3.12/site-packages/aider/main.py", line 912, in main
    coder.run()
  File "/usr/lib/python3.12/site-packages/aider/coders/base_coder.py", line 801, in run
    self.io.write_text(path, content)
    ~~~~~~~~~~~~~~~~~~^^^^^^^^^^^^^^^
ValueError: cannot write to src/app.py: the path is outside the repository
"""

RUST_PANIC = """\
   Compiling scanner v0.3.1
thread 'main' panicked at src/session.rs:214:37:
called `Result::unwrap()` on an `Err` value: Os { code: 28, kind: StorageFull, message: "No space left on device" }
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace
"""

GO_PANIC = """\
panic: runtime error: index out of range [5] with length 3

goroutine 1 [running]:
main.main()
\t/home/u/agent/main.go:14 +0x1d
exit status 2
"""


def test_node_crash_gives_the_enospc_line_not_the_version() -> None:
    assert error_line(NODE_ENOSPC) == "Error: ENOSPC: no space left on device, write"


def test_node_uncaught_error_gives_the_message_over_its_stack() -> None:
    assert error_line(NODE_TYPE_ERROR) == "TypeError: Cannot read properties of undefined (reading 'name')"


def test_python_traceback_gives_its_exception_line() -> None:
    assert error_line(PYTHON_TRACEBACK) == (
        "ValueError: cannot write to src/app.py: the path is outside the repository"
    )


def test_chained_traceback_gives_the_first_exception() -> None:
    chained = PYTHON_TRACEBACK + (
        "\nDuring handling of the above exception, another exception occurred:\n\n"
        'Traceback (most recent call last):\n  File "x.py", line 3, in <module>\n    raise RuntimeError("gave up")\n'
        "RuntimeError: gave up\n"
    )
    assert error_line(chained).startswith("ValueError: cannot write")


def test_rust_panic_gives_the_panic_with_its_message() -> None:
    assert error_line(RUST_PANIC) == (
        "thread 'main' panicked at src/session.rs:214:37: called `Result::unwrap()` on an `Err` value: "
        'Os { code: 28, kind: StorageFull, message: "No space left on device" }'
    )


def test_go_panic() -> None:
    assert error_line(GO_PANIC) == "panic: runtime error: index out of range [5] with length 3"


def test_marked_lines_of_several_shapes() -> None:
    assert error_line("loading\nfatal: not a git repository (or any parent)\n") == (
        "fatal: not a git repository (or any parent)"
    )
    assert error_line("ok\n[ERROR] provider said 500\nretrying\n") == "[ERROR] provider said 500"
    assert error_line("error[E0308]: mismatched types\n --> src/main.rs:2:5\n") == "error[E0308]: mismatched types"
    assert error_line("FATAL could not open the session store\nbye\n") == "FATAL could not open the session store"


def test_the_first_error_wins_over_later_ones() -> None:
    text = "Error: ENOSPC: no space left on device\nError: cannot save the session\n"
    assert error_line(text) == "Error: ENOSPC: no space left on device"


def test_without_an_error_line_the_last_words_that_are_not_noise() -> None:
    assert error_line("starting\nthe model refused the request\n\n") == "the model refused the request"
    assert error_line("gave up after 3 tries\n}\nNode.js v22.11.0\n") == "gave up after 3 tries"
    assert error_line("npm warn deprecated glob@7.2.3\n") == "npm warn deprecated glob@7.2.3"  # only noise: the last
    assert error_line("errors were found in 2 files\n") == "errors were found in 2 files"
    assert error_line("") == "" and error_line("\n \n") == ""


def test_escapes_removed_and_the_line_bounded() -> None:
    assert error_line("\x1b[31mError:\x1b[0m boom\n") == "Error: boom"
    assert len(error_line("Error: " + "x" * 1000)) == MAX_CHARS


def test_describe_failure_names_the_error_line() -> None:
    outcome = ProcessOutcome(exit_code=1, duration_s=2.0, stderr_tail=NODE_ENOSPC)
    assert describe_failure(outcome) == "exit code 1: Error: ENOSPC: no space left on device, write"
