"""The item state machine (DESIGN.md section 4), enforced here and nowhere else.

The catalog calls `check_transition` on every status write, so an illegal change raises
before anything reaches the database.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from app.knowledge.types import IllegalTransitionError, ItemPhase, ItemStatus

_S = ItemStatus

# None is "the row does not exist yet". DELETING is terminal: only row removal follows it.
LEGAL_TRANSITIONS: dict[ItemStatus | None, frozenset[ItemStatus]] = {
    None: frozenset({_S.PREPARING, _S.PROCESSING}),
    # A directory/sitemap root: expanded, then it either waits on its children
    # (processing), settles at once (empty folder -> completed) or fails to expand.
    _S.PREPARING: frozenset({_S.PROCESSING, _S.COMPLETED, _S.FAILED, _S.DELETING}),
    _S.PROCESSING: frozenset({_S.COMPLETED, _S.FAILED, _S.DELETING}),
    # Reindex, restore and backfill start settled items again.
    _S.COMPLETED: frozenset({_S.PREPARING, _S.PROCESSING, _S.DELETING}),
    _S.FAILED: frozenset({_S.PREPARING, _S.PROCESSING, _S.DELETING}),
    _S.DELETING: frozenset(),
}

# Phases exist only while an item is being worked on, and for one stage more on a completed
# item: its vectors, computed after it became searchable by full text (embed_vectors.py).
PHASED_STATUSES = frozenset({_S.PREPARING, _S.PROCESSING})
SETTLED_PHASES = frozenset({ItemPhase.EMBEDDING})


def is_legal(old: ItemStatus | None, new: ItemStatus) -> bool:
    return new in LEGAL_TRANSITIONS[old]


def check_transition(item_id: str, old: ItemStatus | None, new: ItemStatus) -> None:
    if not is_legal(old, new):
        raise IllegalTransitionError(item_id, old, new)


def check_phase(item_id: str, status: ItemStatus, phase: ItemPhase | None) -> None:
    if phase is None or status in PHASED_STATUSES:
        return
    if status is _S.COMPLETED and phase in SETTLED_PHASES:
        return
    raise IllegalTransitionError(item_id, status, status)


def aggregate_status(children: Iterable[ItemStatus]) -> ItemStatus:
    """The status a directory or sitemap root shows for its children."""
    return aggregate_counts(Counter(children))


def aggregate_counts(counts: Mapping[ItemStatus, int]) -> ItemStatus:
    """`aggregate_status` from per-status counts (a root can have many thousands of children).

    Children being deleted do not count: they are on their way out, and a root becomes
    `deleting` only when it is deleted itself (that status is terminal).
    """
    live = {status: n for status, n in counts.items() if n > 0 and status is not _S.DELETING}
    if not live:
        return _S.COMPLETED
    if any(status in PHASED_STATUSES for status in live):
        return _S.PROCESSING
    if set(live) == {_S.FAILED}:
        return _S.FAILED
    return _S.COMPLETED
