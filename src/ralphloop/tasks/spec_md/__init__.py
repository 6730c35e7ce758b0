"""spec.md (seed 003) → prd.json data: the human-written plan turned into the loop's task list.

The conversion is a pure function of the text: no clock, no environment, no set iteration, so the
same spec always gives byte-identical prd.json (re-running `ralph prd` makes no spurious diff).

The reader is line-based rather than a Markdown parser on purpose: the format is small, and a line
scanner can name the exact line of every problem. It follows Markdown where it matters: fenced code
blocks are skipped (a `### heading` inside a code sample is not a story), ATX headings may have a
closing `#` run, and a checkbox or bullet may continue on the next lines.

The modules: lines.py numbers the lines and marks code and headings, frontmatter.py reads the
feature/branch/created block, user_stories.py finds the `### ID: Title` sections and story_body.py
reads each one's fields, parse.py puts the spec together, prd.py turns it into prd.json.
"""
