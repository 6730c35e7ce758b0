"""The lines format, as a third party would ship one: TASKS.txt, one task a line, `[ ]` open and `[x]` done."""

import os

from ralphloop.plugins.formats import Format

FORMAT = Format(
    "lines",
    "ralphloop_lines.source",
    lambda folder: os.path.isfile(os.path.join(folder, "TASKS.txt")),
    template="ralphloop_lines:prompt-lines.md",
    done_words="lines done",
    units="Lines",
    next_step="write the tasks in {shown}/TASKS.txt, one `[ ] task` a line",
    seed="the lines plug-in",
    check="ralphloop_lines.source:check_files",
    auto_commit=True,  # ralph commits each accepted iteration, titled by its line
    title_commits=True,
    task_file="TASKS.txt",  # `ralph run --parallel` works each line in a worktree of its own
    tasks_in="ralphloop_lines.source:file_tasks",
    mark="ralphloop_lines.source:marked",
)
