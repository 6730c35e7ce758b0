"""An agent that notes when it started and ended, so ralph's own time is what lies between two agents.

`stamp_agent STAMPS [EXIT [FILE|- [goal|pass]]]` reads the prompt, appends a line to `FILE` (a path in the
project; several joined by commas) when given, with `goal` answers as a goal-mode agent (completes the step
the prompt names, adds one), with `pass` marks the first open story of $RALPH_FEATURE_DIR/prd.json passing,
appends "<start> <end>" (CLOCK_MONOTONIC seconds, the clock of Python's time.monotonic) to STAMPS
and exits with EXIT. EXIT as `CODE/N` exits CODE on every Nth call (counted by the lines STAMPS holds) and 0
on the others, as an agent that gives up every so often: a call that fails passes no story. It is compiled
from C so that its own start-up (well under a millisecond) hardly counts; without a C compiler a Python one
stands in, and its interpreter start-up (~15 ms) then counts as ralph's.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass

C_SOURCE = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The id after "Work on " at the start of a line of the prompt (goal mode's next step), or NULL. */
static char *next_step(char *prompt) {
    for (char *at = strstr(prompt, "Work on step-"); at; at = strstr(at + 1, "Work on step-")) {
        if (at == prompt || at[-1] == '\n') {
            char *id = at + strlen("Work on "), *end = id + strlen("step-");
            while (*end >= '0' && *end <= '9') end++;
            *end = '\0';
            return id;
        }
    }
    return NULL;
}

/* Marks the first story of $RALPH_FEATURE_DIR/prd.json that does not pass as passing, as an agent that
   finished it would ("passes": false becomes "passes": true). */
static void pass_a_story(void) {
    const char *folder = getenv("RALPH_FEATURE_DIR");
    char path[4096];
    if (!folder || snprintf(path, sizeof path, "%s/prd.json", folder) >= (int)sizeof path) return;
    FILE *in = fopen(path, "rb");
    if (!in) return;
    char *text = malloc(1 << 22);
    size_t size = fread(text, 1, (1 << 22) - 1, in);
    fclose(in);
    text[size] = '\0';
    char *open = strstr(text, "\"passes\": false");
    if (open) {
        FILE *out = fopen(path, "wb");
        if (out) {
            fwrite(text, 1, (size_t)(open - text), out);
            fputs("\"passes\": true", out);
            fputs(open + strlen("\"passes\": false"), out);
            fclose(out);
        }
    }
    free(text);
}

/* Appends a line to each of the comma-separated paths in `list`, as an agent that edits the code. */
static void touch_files(char *list) {
    for (char *path = strtok(list, ","); path; path = strtok(NULL, ",")) {
        FILE *touched = fopen(path, "a");
        if (touched) { fputs("attempt\n", touched); fclose(touched); }
    }
}

/* EXIT as given, or for "CODE/N": CODE when this call (the lines STAMPS holds, plus one) is a multiple of N,
   else 0. */
static int exit_code(const char *spec, const char *stamps) {
    const char *slash = strchr(spec, '/');
    if (!slash) return atoi(spec);
    long every = atol(slash + 1), call = 1;
    FILE *in = fopen(stamps, "r");
    if (in) {
        for (int c; (c = fgetc(in)) != EOF;) call += c == '\n';
        fclose(in);
    }
    return every > 0 && call % every == 0 ? atoi(spec) : 0;
}

int main(int argc, char **argv) {
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    size_t size = 0, room = 65536;
    char *prompt = malloc(room + 1);
    ssize_t got;
    while ((got = read(0, prompt + size, room - size)) > 0) {
        size += (size_t)got;
        if (size == room) prompt = realloc(prompt, (room *= 2) + 1);
    }
    prompt[size] = '\0';
    int code = argc > 2 ? exit_code(argv[2], argv[1]) : 0;
    if (argc > 3 && strcmp(argv[3], "-") != 0) touch_files(argv[3]);
    if (argc > 4 && strcmp(argv[4], "pass") == 0 && code == 0) pass_a_story();
    if (argc > 4 && strcmp(argv[4], "goal") == 0) {
        char *step = next_step(prompt);
        const char *iteration = getenv("RALPH_ITERATION");
        printf("```json\n{\"status\": \"continue\", \"completedStepIds\": [%s%s%s], "
               "\"pendingSteps\": [{\"id\": null, \"prompt\": \"step from iteration %s\"}]}\n```\n",
               step ? "\"" : "", step ? step : "", step ? "\"" : "", iteration ? iteration : "?");
        fflush(stdout);
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    FILE *stamps = fopen(argv[1], "a");
    if (!stamps) return 2;
    fprintf(stamps, "%ld.%09ld %ld.%09ld\n", (long)start.tv_sec, start.tv_nsec, (long)end.tv_sec, end.tv_nsec);
    fclose(stamps);
    return code;
}
"""

PY_SOURCE = r"""
import json, os, re, sys, time
start = time.monotonic()
prompt = sys.stdin.read()
code, _, every = (sys.argv[2] if len(sys.argv) > 2 else "0").partition("/")
if every:
    try:
        with open(sys.argv[1]) as previous:
            call = previous.read().count("\n") + 1
    except FileNotFoundError:
        call = 1
    code = code if int(every) > 0 and call % int(every) == 0 else "0"
if len(sys.argv) > 3 and sys.argv[3] != "-":
    for path in sys.argv[3].split(","):
        with open(path, "a") as touched:
            touched.write("attempt\n")
if len(sys.argv) > 4 and sys.argv[4] == "pass" and int(code) == 0:
    prd = os.path.join(os.environ["RALPH_FEATURE_DIR"], "prd.json")
    with open(prd) as handle:
        text = handle.read()
    with open(prd, "w") as handle:
        handle.write(text.replace('"passes": false', '"passes": true', 1))
if len(sys.argv) > 4 and sys.argv[4] == "goal":
    found = re.search(r"^Work on (step-\d+)", prompt, re.M)
    result = {"status": "continue", "completedStepIds": [found.group(1)] if found else [],
              "pendingSteps": [{"id": None, "prompt": "step from iteration " + os.environ.get("RALPH_ITERATION", "?")}]}
    print("```json\n" + json.dumps(result) + "\n```", flush=True)
with open(sys.argv[1], "a") as stamps:
    stamps.write(f"{start:.9f} {time.monotonic():.9f}\n")
sys.exit(int(code))
"""


@dataclass(frozen=True, slots=True)
class StampAgent:
    """The built agent: the command to run it and whether it is the compiled one."""

    argv: tuple[str, ...]
    compiled: bool

    def command(
        self,
        stamps: str,
        exit_code: int = 0,
        touch: str | tuple[str, ...] | None = None,
        goal: bool = False,
        passes: bool = False,
        fail_every: int = 0,
    ) -> str:
        """The `--agent-cmd` value that records into `stamps`; it appends a line to `touch` (one path or
        several); with `goal`, it answers as a goal agent; with `passes`, it marks the first open story of the
        feature's prd.json passing (a story done); with `fail_every` N, only every Nth call exits `exit_code`
        (and passes no story), the others 0."""
        role = ["goal"] if goal else ["pass"] if passes else []
        files = ",".join(touch) if isinstance(touch, tuple) else touch
        code = f"{exit_code}/{fail_every}" if fail_every else str(exit_code)
        words = [*self.argv, stamps, code, files or "-", *role]
        return " ".join(words)


def build() -> StampAgent:
    """Compile the agent into a temporary folder (or fall back to the Python one)."""
    folder = tempfile.mkdtemp(prefix="ralph-bench-agent-")
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler:
        source = os.path.join(folder, "stamp_agent.c")
        binary = os.path.join(folder, "stamp_agent")
        with open(source, "w", encoding="utf-8") as handle:
            handle.write(C_SOURCE)
        for flags in (["-O2", "-static"], ["-O2"]):
            if (
                subprocess.run([compiler, *flags, "-o", binary, source], capture_output=True, check=False).returncode
                == 0
            ):
                return StampAgent((binary,), compiled=True)
    script = os.path.join(folder, "stamp_agent.py")
    with open(script, "w", encoding="utf-8") as handle:
        handle.write(PY_SOURCE)
    print("bench: no C compiler; the Python stand-in agent's start-up counts as ralph's time", file=sys.stderr)
    return StampAgent((sys.executable, "-S", script), compiled=False)


def read_stamps(path: str) -> list[tuple[float, float]]:
    """(start, end) of each agent run so far, in order."""
    try:
        with open(path, encoding="utf-8") as handle:
            rows = [line.split() for line in handle if line.strip()]
    except FileNotFoundError:
        return []
    return [(float(start), float(end)) for start, end in rows]


def gaps_ms(stamps: list[tuple[float, float]]) -> list[float]:
    """Milliseconds from each agent's end to the next one's start: ralph's own time per iteration."""
    return [(after[0] - before[1]) * 1000 for before, after in itertools.pairwise(stamps)]
