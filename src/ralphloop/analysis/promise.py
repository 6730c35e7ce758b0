"""The completion promise (seed 003): `<promise>COMPLETE</promise>`, or the text config `completion.promise` names.

Only the configured text is a promise once one is configured: a user who names `<promise>SHIPPED</promise>` has
told the agent to say that, and the default then is just words.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ralphloop.words.patterns import lazy

PROMISE = "<promise>COMPLETE</promise>"

_DEFAULT = lazy(r"<promise>[ \t]*COMPLETE[ \t]*</promise>")
_TAG_SHAPED = lazy(r"<(?P<tag>[A-Za-z][\w-]*)>(?P<body>[^<>]*)</(?P=tag)>")
_WORD = lazy(r"\w")


@lru_cache(maxsize=8)
def promise_pattern(promise: str | None = None) -> re.Pattern[str]:
    """What counts as saying `promise` (None: the default). A tag-shaped one (`<promise>SHIPPED</promise>`) allows
    spaces or tabs inside its tags, as the default does; a word at either end of it must end there (a promise
    `COMPLETE` is not said by INCOMPLETE)."""
    if promise is None or promise == PROMISE:
        return _DEFAULT.compiled
    shaped = _TAG_SHAPED.fullmatch(promise)
    if shaped:
        tag, body = re.escape(shaped["tag"]), re.escape(shaped["body"].strip(" \t"))
        return re.compile(rf"<{tag}>[ \t]*{body}[ \t]*</{tag}>")
    before = r"(?<!\w)" if _WORD.match(promise[0]) else ""
    after = r"(?!\w)" if _WORD.match(promise[-1]) else ""
    return re.compile(before + re.escape(promise) + after)
