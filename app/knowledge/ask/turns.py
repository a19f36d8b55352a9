"""The conversation kept per base: turns to and from catalog rows (catalog/ask.py)."""

from __future__ import annotations

import json
import logging
from typing import Any

from app.knowledge.catalog import Catalog
from app.knowledge.types import AnswerState, AskSource, AskTurn, ScoreKind, SearchResult

log = logging.getLogger(__name__)


def sources_json(sources: list[AskSource]) -> str:
    return json.dumps([s.to_json() for s in sources], ensure_ascii=False)


def _source(data: dict[str, Any]) -> AskSource:
    result = SearchResult(
        rank=int(data["rank"]),
        score=float(data["score"]),
        score_kind=ScoreKind(data["scoreKind"]),
        item_id=str(data["itemId"]),
        source=str(data["source"]),
        title=str(data["title"]),
        concept_id=str(data["conceptId"]),
        char_start=int(data["charStart"]),
        char_end=int(data["charEnd"]),
        text=str(data["text"]),
        page=None if data.get("page") is None else int(data["page"]),
    )
    return AskSource(int(data["number"]), str(data["baseId"]), result)


def parse_sources(text: str) -> list[AskSource]:
    try:
        return [_source(entry) for entry in json.loads(text)]
    except (TypeError, ValueError, KeyError) as exc:
        # A row edited by hand: the turn still shows, without its links.
        log.warning("a conversation turn's sources could not be read: %s", exc)
        return []


def _turn(row: tuple[Any, ...]) -> AskTurn:
    turn_id, base_id, question, query, answer, sources, chat_model, state, created_at = row
    try:
        answer_state = AnswerState(state)
    except ValueError:
        answer_state = AnswerState.COMPLETE
    return AskTurn(
        base_id=base_id,
        question=question,
        query=query,
        answer=answer,
        sources=parse_sources(sources),
        chat_model=chat_model,
        state=answer_state,
        id=int(turn_id),
        created_at=float(created_at),
    )


def load(catalog: Catalog, base_id: str, limit: int | None = None) -> list[AskTurn]:
    return [_turn(row) for row in catalog.list_ask_turns(base_id, limit)]


def save(catalog: Catalog, turn: AskTurn) -> AskTurn:
    turn.id = catalog.add_ask_turn(
        turn.base_id,
        turn.question,
        turn.query,
        turn.answer,
        sources_json(turn.sources),
        turn.chat_model,
        str(turn.state),
    )
    return turn
