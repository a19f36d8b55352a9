"""Context assembly: which retrieved passages go to the chat model, within its budget.

Passages come in retrieval order (best first). A passage is left out when it repeats one
already taken (the same text, e.g. two copies of a document, or a span inside a span of
the same document already taken), or when its document already gave `per_document`
passages, so one long document cannot crowd out the others. Then passages are numbered
1..n while they fit the chat model's context: its size, less the answer's reserve, the
prompt's own words, the earlier turns and the question, all measured in estimated tokens.

Trove has no chat model's tokenizer, so tokens are estimated (one per word run, one per CJK
character: pipeline/indexing/estimate.py) and scaled up by TOKEN_FACTOR, since subword
tokenizers split English words into ~1.3 tokens on average; a server that still says the
prompt is too long gets a halved budget (engine.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from app.knowledge.ask.prompt import NO_PASSAGES, answer_messages
from app.knowledge.pipeline.indexing.estimate import count_tokens
from app.knowledge.types import AskSource, AskTurn, SearchResult
from app.providers.chat import Message

TOKEN_FACTOR = 1.3
MESSAGE_OVERHEAD = 4  # role and separators per chat message
DEFAULT_CONTEXT_TOKENS = 8192
DEFAULT_ANSWER_TOKENS = 1024
DEFAULT_PER_DOCUMENT = 3
HISTORY_TURNS = 3


@dataclass(frozen=True, slots=True)
class Budget:
    context_tokens: int = DEFAULT_CONTEXT_TOKENS
    answer_tokens: int = DEFAULT_ANSWER_TOKENS

    @property
    def prompt_tokens(self) -> int:
        return max(0, self.context_tokens - self.answer_tokens)

    @classmethod
    def for_context(cls, context_tokens: int) -> Budget:
        """A model's context, a quarter of it (at most the default) kept for the answer."""
        return cls(context_tokens, min(DEFAULT_ANSWER_TOKENS, context_tokens // 4))

    def halved(self) -> Budget:
        return Budget.for_context(self.context_tokens // 2)


@dataclass(frozen=True, slots=True)
class Context:
    sources: list[AskSource]
    messages: list[Message]
    tokens: int
    history: list[AskTurn]


def estimate(text: str) -> int:
    return math.ceil(count_tokens(text) * TOKEN_FACTOR)


def messages_tokens(messages: Sequence[Message]) -> int:
    return sum(estimate(m["content"]) + MESSAGE_OVERHEAD for m in messages)


def distinct(
    candidates: Sequence[tuple[str, SearchResult]], per_document: int = DEFAULT_PER_DOCUMENT
) -> list[tuple[str, SearchResult]]:
    """Candidates without repeats and with at most `per_document` per document."""
    taken: list[tuple[str, SearchResult]] = []
    texts: set[str] = set()
    per_item: dict[str, int] = {}
    for base_id, result in candidates:
        text = " ".join(result.text.split())
        if text in texts or per_item.get(result.item_id, 0) >= per_document:
            continue
        if any(
            r.item_id == result.item_id
            and r.char_start <= result.char_start
            and result.char_end <= r.char_end
            for _, r in taken
        ):
            continue
        texts.add(text)
        per_item[result.item_id] = per_item.get(result.item_id, 0) + 1
        taken.append((base_id, result))
    return taken


def assemble(
    candidates: Sequence[tuple[str, SearchResult]],
    question: str,
    history: Sequence[AskTurn],
    budget: Budget,
) -> Context:
    """The numbered sources and the messages that fit `budget` (earlier turns go first)."""
    chosen = distinct(candidates)
    turns = list(history[-HISTORY_TURNS:])
    base = answer_messages([], question, turns)
    while turns and messages_tokens(base) > budget.prompt_tokens // 2:
        turns.pop(0)  # an old turn matters less than a passage
        base = answer_messages([], question, turns)
    used = messages_tokens(base) - estimate(NO_PASSAGES)  # replaced by the passages
    sources: list[AskSource] = []
    for base_id, result in chosen:
        source = AskSource(len(sources) + 1, base_id, result)
        cost = estimate(result.title) + estimate(result.text) + 8
        if used + cost > budget.prompt_tokens:
            continue  # a shorter passage further down may still fit
        sources.append(source)
        used += cost
    messages = answer_messages(sources, question, turns)
    return Context(sources, messages, messages_tokens(messages), turns)
