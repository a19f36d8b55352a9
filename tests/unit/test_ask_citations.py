"""Citation markers: parsed in their common shapes, unknown numbers dropped and counted."""

from __future__ import annotations

from app.knowledge.ask import citations


def test_markers_in_groups_and_runs_are_read_in_order_once() -> None:
    text = "Sun [2][1]. Water [1, 3]. 水 [3、4]。"
    assert citations.cited_numbers(text) == [2, 1, 3, 4]


def test_unknown_numbers_are_dropped_and_counted_keeping_the_rest() -> None:
    cleaned, dropped = citations.clean("Sun [1][7]. Water [2, 9]. Soil [8].", {1, 2})
    assert cleaned == "Sun [1]. Water [2]. Soil."
    assert dropped == 3


def test_a_text_without_unknown_markers_is_left_alone() -> None:
    text = "Basil [1] likes sun [1][2]."
    assert citations.clean(text, {1, 2}) == (text, 0)


def test_spans_point_at_the_markers_for_links() -> None:
    text = "Sun [1] and rain [2, 3]."
    found = citations.spans(text)
    assert [(text[s:e], numbers) for s, e, numbers in found] == [
        ("[1]", [1]),
        ("[2, 3]", [2, 3]),
    ]
