"""Story specs (seed 002): `specs/epic-N/story-N.M-slug.md` files with YAML frontmatter, one story each.

What seed 002's ralph.sh got wrong, and this source does instead:
- the work order is every spec found, sorted naturally (1.2 < 1.10 < 2.1), so a new spec needs no code
  edit; a configured `story_order` still wins;
- `depends_on` is respected: a story waits until its dependencies are done;
- the frontmatter is validated before the run, each problem with its file and line;
- a story is marked done by rewriting only its `status:` value, whatever it was (not only "pending").

Which files are stories: `specs/epic-<N>/story-<N.M>[-<slug>].md`, where N.M is two whole numbers.
Anything else under specs/ (notes, `story-8.md`, `story-8.3.1.md`, `Story-1.1.md`, `epic-1-auth/`,
files directly in specs/ or deeper than the epic folder) is not a story and is ignored without a
word, so that specs/ can hold other documents.

Spec files that a configured `story_order` does not name are left out of the run and reported nowhere
(not even by `ralph validate`): leaving them out is what the order is for. `unlisted` in a scan says
which they are, for a caller that wants to show them.

The modules: files.py finds the spec files, spec.py reads one (fields.py checks its frontmatter
values), scan.py reads them all into the work order with every problem, recorded.py reads what the
records say is done, marking.py writes a story's done mark, source.py is the task source, and
example.py is the spec `ralph init` writes.
"""
