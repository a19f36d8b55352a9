"""What a knowledge base may be called: the one rule for create, rename, attach and import.

A name is shown in lists, menus, window titles and terminals, so it is one line of text: no
control characters (a newline splits a listing, an escape sequence drives the terminal that
prints it), no bidirectional overrides (they make a name read as another), and a length a
list can show. A name the person types is refused with the reason; a name that comes from
elsewhere (an imported file, a server) is made to follow the rule instead, since refusing a
whole base for its name would help nobody.
"""

from __future__ import annotations

import re
import unicodedata

from app.knowledge.types import ErrorCode, TroveError

MAX_NAME_CHARS = 200
# Line and paragraph separators break a line as a newline does; the bidirectional
# controls are those path_safety refuses in file names.
_LINE_BREAKS = frozenset("\u2028\u2029\u0085")
_BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
_SPACES = re.compile(r"\s+")


def _unfit(ch: str) -> bool:
    return unicodedata.category(ch) in ("Cc", "Cs") or ch in _LINE_BREAKS or ch in _BIDI_CONTROLS


def checked_name(name: str) -> str:
    """A name the person gave, trimmed; refused when it breaks the rule."""
    name = name.strip()
    if not name:
        raise TroveError(ErrorCode.INVALID_ARGUMENT, "a knowledge base needs a name")
    bad = next((ch for ch in name if _unfit(ch)), None)
    if bad is not None:
        raise TroveError(
            ErrorCode.INVALID_ARGUMENT,
            f"a knowledge base name is one line of text: {name[:60]!a} holds the control "
            f"character {bad!a}",
        )
    if len(name) > MAX_NAME_CHARS:
        raise TroveError(
            ErrorCode.INVALID_ARGUMENT,
            f"a knowledge base name has at most {MAX_NAME_CHARS} characters "
            f"(this one has {len(name)})",
        )
    return name


def fitted_name(name: str, fallback: str) -> str:
    """A name from elsewhere made to follow the rule: control characters become spaces,
    runs of spaces one, and it is cut to the longest name allowed."""
    cleaned = "".join(" " if _unfit(ch) else ch for ch in name)
    cleaned = _SPACES.sub(" ", cleaned).strip()[:MAX_NAME_CHARS].strip()
    return cleaned or fallback
