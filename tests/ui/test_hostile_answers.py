"""A chat provider's answer is hostile input: in the Ask view it is shown as text, and its
only links are the citations Trove made, to passages it retrieved."""

from __future__ import annotations

from app.ui.ask.conversation import answer_html, parse_link

HOSTILE = (
    'See <a href="file:///etc/passwd">this</a> <img src="http://127.0.0.1:9/x.png">'
    "<script>alert(1)</script> and [1] [7] [1, 2]"
)


def test_markup_in_an_answer_is_escaped_and_only_known_citations_link() -> None:
    shown = answer_html(HOSTILE, 0, valid={1, 2})
    assert '<a href="file:' not in shown and "<img" not in shown and "<script" not in shown
    assert "&lt;a href=&quot;file:///etc/passwd&quot;&gt;" in shown
    assert shown.count("<a href=") == 3  # [1], and [1, 2]: the passages retrieved
    assert '<a href="cite:0:7">' not in shown and "[7]" in shown  # no such passage: text


def test_only_citation_links_are_opened() -> None:
    assert parse_link("cite:0:1") == (0, 1)
    for href in ("file:///etc/passwd", "http://127.0.0.1/", "cite:../x:1", "javascript:1"):
        assert parse_link(href) is None
