"""The conversation as rich text: each turn's question and answer, its markers as links
`cite:<turn>:<number>` that the view opens in the passage viewer."""

from __future__ import annotations

import html
from collections.abc import Sequence

from PySide6.QtCore import QCoreApplication

from app.knowledge.service import KnowledgeService
from app.knowledge.types import AnswerState, AskTurn

SCHEME = "cite"


def link(turn: int, number: int) -> str:
    return f"{SCHEME}:{turn}:{number}"


def parse_link(href: str) -> tuple[int, int] | None:
    scheme, _, rest = href.partition(":")
    turn, _, number = rest.partition(":")
    if scheme != SCHEME or not turn.isdigit() or not number.isdigit():
        return None
    return int(turn), int(number)


def answer_html(text: str, turn: int, valid: set[int]) -> str:
    """The answer escaped, its markers citing a passage made links."""
    parts: list[str] = []
    pos = 0
    for start, end, numbers in KnowledgeService.citation_spans(text):
        parts.append(html.escape(text[pos:start]))
        links = [f'<a href="{link(turn, n)}">{n}</a>' if n in valid else str(n) for n in numbers]
        parts.append("[" + ", ".join(links) + "]")
        pos = end
    parts.append(html.escape(text[pos:]))
    return "".join(parts).replace("\n", "<br>")


def _state_note(state: AnswerState) -> str:
    if state is AnswerState.INTERRUPTED:
        return QCoreApplication.translate("AskView", "The answer broke off here.")
    if state is AnswerState.CANCELLED:
        return QCoreApplication.translate("AskView", "Stopped.")
    return ""


def turn_html(turn: AskTurn, index: int) -> str:
    you = QCoreApplication.translate("AskView", "You")
    valid = {s.number for s in turn.sources}
    body = answer_html(turn.answer, index, valid)
    note = _state_note(turn.state)
    noted = f' <span style="color:#8a4b00"><i>{html.escape(note)}</i></span>' if note else ""
    return (
        f'<p style="margin-top:10px"><b>{html.escape(you)}:</b> {html.escape(turn.question)}</p>'
        f"<p>{body}{noted}</p>"
    )


def conversation_html(turns: Sequence[AskTurn]) -> str:
    return "".join(turn_html(turn, i) for i, turn in enumerate(turns))


def pending_html(question: str) -> str:
    """A question whose answer is on its way (the answer's text is appended as it streams)."""
    you = QCoreApplication.translate("AskView", "You")
    return f'<p style="margin-top:10px"><b>{html.escape(you)}:</b> {html.escape(question)}</p>'
