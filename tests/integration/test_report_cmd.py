"""`ralph report`: the summary of a feature's ralph_metrics.jsonl, through the real `ralph`; it only reads. What it
charts of a run's own records (the budget that run had) is tests/engine/test_report_cmd.py's, in-process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import RalphRunner, loaded_modules
from tests.integration.helpers import snapshot

METRICS = ".ralph/feat/ralph_metrics.jsonl"


def line(iteration, *, duration=45.0, usage=True, success=True, outcome="complete", cost=0.0151, files=3):
    tokens = (
        {
            "input_tokens": 12500,
            "output_tokens": 850,
            "cache_creation_tokens": 5000,
            "cache_read_tokens": 10000,
            "total_tokens": 13350,
        }
        if usage
        else dict.fromkeys(
            ("input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens", "total_tokens")
        )
    )
    return json.dumps(
        {
            "iteration": iteration,
            "timestamp": f"2026-01-16T12:{iteration:02d}:00Z",
            "duration_seconds": duration,
            "model": "claude-opus-4-5-20251101" if usage else None,
            "stop_reason": "end_turn" if usage else None,
            "usage": tokens,
            "files_changed": files,
            "success": success,
            "exit_code": 0 if success else 1,
            "cost_usd": cost if usage else None,
            "num_turns": 4 if usage else None,
            "session_id": "s-1" if usage else None,
            "task_id": f"S-{iteration}",
            "outcome": outcome,
            "agent": "claude" if usage else "command",
        },
        separators=(",", ":"),
    )


def write_metrics(feature, text):
    path = feature / "ralph_metrics.jsonl"
    path.write_bytes(text.encode())
    return path


def test_report_prints_the_final_summary(project, feature, ralph):
    metrics = write_metrics(
        feature,
        line(1, duration=38.0)
        + "\n"
        + line(2, duration=52.0, success=False, outcome="failed", files=0)
        + "\n"
        + line(3, usage=False, duration=45.0, outcome="in-progress", files=1)
        + "\n",
    )
    before = snapshot(project)

    done = ralph("report")

    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    out = done.stdout.splitlines()
    assert out[:3] == ["=" * 50, " " * 18 + "FINAL SUMMARY", "=" * 50]
    assert "  Completed:       3" in out
    # lines written before `counted` was: only a completed task's line is a success by today's meaning
    assert "  Success Rate:    33.3%" in out
    assert "  Outcomes:        1 complete, 1 failed, 1 in-progress" in out
    assert "  Total:           2m 15s" in out
    assert "  Min:             0m 38s" in out
    assert "  Max:             0m 52s" in out
    assert "  Total Input:     25,000 tokens" in out
    assert "  Average:         13,350 tokens per iteration (of 2 iterations that reported tokens)" in out
    assert "  Overall Hit Rate: 36.4%" in out  # read / (input + created + read), never above 100%
    assert "  Total:           $0.0302 + the cost of 1 iteration not reported" in out  # line 3 reported none
    assert "  Total:           4 files" in out
    assert out[-1] == f"ℹ  Read from: {METRICS}"  # a read-only command: nothing was saved
    assert snapshot(project) == before  # report never writes
    assert metrics.read_bytes() == before[METRICS]  # byte for byte


def test_report_json(project, feature, ralph):
    metrics = write_metrics(feature, line(1) + "\n" + line(2, usage=False) + "\n")
    before = metrics.read_bytes()

    done = ralph("report", "--json", "-f", "feat")

    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    body = json.loads(done.stdout)
    assert list(body) == [
        "schema_version",
        "feature",
        "metrics_file",
        "summary",
        "stories",
        "timeline",
        "runs",
        "windows",
        "skipped",
    ]
    assert body["schema_version"] == 1
    assert body["feature"] == "feat"
    assert body["metrics_file"] == str(metrics)
    assert body["skipped"] == []
    summary = body["summary"]
    assert summary["iterations"] == 2
    assert summary["max_iterations"] is None  # the file spans every run: no single run's limit applies
    assert summary["successes"] == 2
    assert summary["success_rate"] == 100.0
    assert summary["duration_seconds"] == {"total": 90.0, "average": 45.0, "min": 45.0, "max": 45.0}
    assert summary["tokens"]["iterations_reported"] == 1
    assert summary["tokens"]["total"] == 13350
    assert summary["tokens"]["average"] == 13350.0
    assert summary["tokens"]["cache_hit_rate"] == 36.4
    assert summary["cost_usd"] == {"iterations_reported": 1, "total": 0.0151, "average": 0.0151}
    assert summary["files_changed"]["total"] == 6
    assert summary["outcomes"] == {"complete": 2}
    assert summary["models"] == ["claude-opus-4-5-20251101"]
    assert metrics.read_bytes() == before


def test_report_without_metrics_is_a_one_line_error(project, feature, ralph):
    before = snapshot(project)

    for args in (("report",), ("report", "--json")):
        done = ralph(*args)
        assert done.returncode == 1
        assert done.stdout == ""
        assert done.stderr == f"ralph: error: {METRICS}: no metrics yet (no iteration has finished)\n"
    assert snapshot(project) == before  # not even an empty metrics file


def test_report_names_the_malformed_line(project, feature, ralph):
    metrics = write_metrics(feature, line(1) + "\n" + "{not json}\n" + line(3) + "\n")
    before = metrics.read_bytes()

    done = ralph("report")

    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith(f"ralph: error: {METRICS}:2: not valid JSON")
    assert "Traceback" not in done.stderr
    assert metrics.read_bytes() == before


def test_report_names_a_line_of_the_wrong_shape(project, feature, ralph):
    write_metrics(feature, line(1) + "\n" + line(2).replace('"success":true', '"success":"yes"') + "\n")

    done = ralph("report", "--json")

    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == (
        f'ralph: error: {METRICS}:2: not a metrics line ("success" is a string, expected a boolean)\n'
    )


def test_report_skips_a_truncated_last_line_with_a_warning(project, feature, ralph):
    metrics = write_metrics(feature, line(1) + "\n" + line(2) + "\n" + line(3)[:60])
    before = snapshot(project)

    done = ralph("report")

    assert done.returncode == 0, done.stderr
    assert done.stderr == f"ralph: warning: {METRICS}:3: skipped an unfinished last line (cut short by a crash?)\n"
    assert "  Completed:       2" in done.stdout.splitlines()
    as_json = ralph("report", "--json")
    assert as_json.returncode == 0
    assert json.loads(as_json.stdout)["skipped"] == [
        {"line": 3, "reason": "an unfinished last line (cut short by a crash?)"}
    ]
    assert json.loads(as_json.stdout)["summary"]["iterations"] == 2
    assert snapshot(project) == before
    assert metrics.read_bytes().endswith(line(3)[:60].encode())  # left as it was: report never repairs


def test_report_with_an_unknown_feature(project, feature, ralph):
    done = ralph("report", "-f", "nope")
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.startswith("ralph: error: -f nope: no such feature")
    assert done.stderr.count("\n") == 1


def test_report_from_a_subfolder_shows_where_the_file_is(project, feature, ralph):
    write_metrics(feature, line(1) + "\n")
    sub = project / "src"
    sub.mkdir()

    done = ralph("report", cwd=sub)

    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == f"ℹ  Read from: {feature / 'ralph_metrics.jsonl'}"


def test_report_is_listed_in_help(ralph):
    done = ralph("--help")
    assert done.returncode == 0
    assert "show the metrics summary of a feature's iterations" in done.stdout


HEAVY = (
    "plotly",  # only `--html` draws charts
    "rich",
    "yaml",
    "msgspec",
    "psutil",
    "ralphloop.engine",
    "ralphloop.config.settings",
    "ralphloop.core.protocols",
    "ralphloop.processes.local",
    "ralphloop.files.store",
)

PROBE = (
    "import sys\n"
    "from ralphloop.cli.main import main\n"
    "code = main(['report', '--json'])\n"
    "sys.stderr.write('\\n'.join(sorted(sys.modules)))\n"
    "sys.exit(code)\n"
)


def test_report_imports_nothing_heavy(project, feature, ralph_env):
    write_metrics(feature, line(1) + "\n")

    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=project, env=ralph_env, capture_output=True, text=True, check=False
    )

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["summary"]["iterations"] == 1
    loaded = set(done.stderr.split("\n"))
    assert "ralphloop.records.metrics" in loaded
    heavy = sorted(name for name in loaded if name.split(".")[0] in HEAVY or name.startswith(HEAVY))
    assert heavy == []


def test_html_refuses_a_file_it_cannot_write_in_one_line_writing_nothing(project, feature, ralph):
    write_metrics(feature, line(1) + "\n")
    (project / "notes.txt").write_text("a file, not a folder\n")
    (project / "out").mkdir()
    before = snapshot(project)
    cases = {
        "missing/report.html": "--html missing/report.html: no such folder missing",
        "out": f"--html out: is a folder (name a file in it, e.g. {os.path.join('out', 'report.html')})",
        "notes.txt/report.html": "--html notes.txt/report.html: notes.txt is not a folder",
        "": "--html: give a file name (or - for stdout)",
    }
    for target, message in cases.items():
        done = ralph("report", "--html", target)
        assert (done.returncode, done.stdout, done.stderr) == (1, "", f"ralph: error: {message}\n")
    both = ralph("report", "--json", "--html", "report.html")
    assert (both.returncode, both.stderr) == (1, "ralph: error: --json and --html are two outputs: give one of them\n")
    assert snapshot(project) == before


@pytest.mark.skipif(not os.path.isdir("/sys"), reason="needs a folder no one may write in, even root")
def test_html_into_a_folder_it_may_not_write_leaves_nothing_behind(project, feature, ralph):
    pytest.importorskip("plotly")
    write_metrics(feature, line(1) + "\n")
    before = set(os.listdir("/sys"))

    done = ralph("report", "--html", "/sys/report.html")

    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("ralph: error: --html /sys/report.html: cannot write: ")
    assert done.stderr.count("\n") == 1
    assert set(os.listdir("/sys")) == before  # no temporary file left


def test_html_without_plotly_names_the_extra(project, feature, ralph_env):
    write_metrics(feature, line(1) + "\n")
    probe = (
        "import sys\n"
        "sys.modules['plotly'] = None  # as if the optional extra were not installed\n"
        "from ralphloop.cli.launch import entry\n"
        "sys.argv = ['ralph', 'report', '--html', 'report.html']\n"
        "entry()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=project, env=ralph_env, capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == "ralph: error: --html needs plotly, an optional extra: pip install 'ralphloop[report]'\n"
    assert not (project / "report.html").exists()


def test_a_run_never_imports_the_charts(project: Path, feature: Path, ralph_env: dict[str, str]) -> None:
    done, loaded = loaded_modules(["run", "-n", "1", "--agent-cmd", "true"], project, ralph_env)
    assert done.returncode == 1, done.stdout  # one iteration that finishes nothing: max iterations
    assert sorted(name for name in loaded if name.startswith(("plotly", "playwright", "ralphloop.report"))) == []


def test_report_reads_an_older_feature_without_the_newer_fields(project, feature, ralph: RalphRunner) -> None:
    """Lines from before task titles, wall times and run ids, and no event log: a timeline all the same."""
    write_metrics(feature, line(1) + "\n" + line(2, success=False, outcome="failed") + "\n")
    done = ralph("report", env={"TZ": "UTC"})
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert "  Story  Attempts  Agent time  Tokens  Cache read     Cost" in out  # no title recorded: no such column
    assert "  S-1    ✓ passes      0m 45s  13,350      10,000  $0.0151" in out
    assert "  Total  2             1m 30s  26,700      20,000  $0.0302" in out
    # began its agent time before its line was written (no wall time recorded); no waits known
    assert out[out.index("  Fri 16 Jan 2026") + 1 :][:2] == [
        "  12:00:15  #1    S-1  ✓ passes    0m 45s  $0.0151",
        "  12:01:15  #2    S-2  ✗ failed    0m 45s  $0.0151",
    ]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("wall_seconds", 1e12),
        ("wall_seconds", "1e400"),  # JSON's 1e400 is read as infinity
        ("timestamp", "0001-01-01T00:00:10Z"),
        ("timestamp", "9999-12-31T23:59:59-14:00"),
    ],
)
def test_times_out_of_range_in_the_records_are_unknown_not_a_crash(project, feature, ralph, field, value, tmp_path):
    """The agent can write the metrics file and the event log: a time out of datetime's range is not one."""
    good = json.loads(line(1))
    hostile = json.dumps({**good, "iteration": 2, field: value}).replace('"1e400"', "1e400")
    write_metrics(feature, line(1) + "\n" + hostile + "\n")
    events = feature / "events.jsonl"
    events.write_text(
        json.dumps({"time": "0001-01-01T00:00:00+14:00", "level": "warn", "text": "x"})
        + "\n"
        + json.dumps(
            {
                "time": "2026-01-16T12:00:00Z",
                "level": "warn",
                "text": "y",
                "wait": {"kind": "usage limit", "until": "9999-12-31T23:59:59-14:00"},
            }
        )
        + "\n"
    )
    for args in ((), ("--json",), ("--html", str(tmp_path / "page.html"))):
        done = ralph("report", "-f", "feat", *args)
        assert done.returncode == 0, (args, done.stdout + done.stderr)
        assert "internal error" not in done.stderr and "Traceback" not in done.stderr
