"""`ralph report` on the records of a run, in-process: a run built as `ralph run` builds it (its agent played back),
then `ralph report` in this process (harness.ralph). What report prints of a metrics file it is handed, and its
one-line errors, are tests/integration/test_report_cmd.py's.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.engine.harness import STORY, Turns, ralph, run


def test_the_page_charts_the_budget_the_run_had_not_the_configs(project: Path, feature: Path, tmp_path: Path) -> None:
    """`--max-cost 2` is in no file the report can read later: each metrics line keeps its run's budget."""
    config = project / ".ralph" / "config.yaml"
    config.write_text(config.read_text() + "\nbudget:\n  max_cost_usd: 5\n")
    done = run(project, Turns(then=STORY), n=1, flags={"max_cost_usd": ("2", "--max-cost")})
    assert done.outcome.reason.exit_code == 1, done.screen  # one of three stories: the limit of 1 iteration
    assert json.loads((feature / "ralph_metrics.jsonl").read_text().splitlines()[-1])["max_cost_usd"] == 2
    html = tmp_path / "page.html"  # (the page on stdout, `--html -`, is bytes: the CLI's, with a real stdout)
    page = ralph("report", "-f", "feat", "--html", str(html))
    assert page.code == 0, page.err
    assert "budget $2.00 a run" in html.read_text() and "$5.00" not in html.read_text()
