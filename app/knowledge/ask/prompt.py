"""The prompts sent to the chat model, from versioned files shipped with the package.

A prompt is a file in `prompts/` named `<purpose>_v<N>.txt`, a string.Template (`$name`).
A changed prompt is a new file with the next number, so an answer can always be traced to
the words that asked for it (`ANSWER_PROMPT` names the one in use).
"""

from __future__ import annotations

import functools
import string
from collections.abc import Sequence
from importlib import resources

from app.knowledge.types import AskSource, AskTurn
from app.providers.chat import Message

ANSWER_PROMPT = "answer_v1"
REWRITE_PROMPT = "rewrite_v1"
NO_PASSAGES = "(No passages were found for this question.)"


@functools.cache
def load(name: str) -> string.Template:
    text = resources.files(__package__).joinpath("prompts", f"{name}.txt").read_text("utf-8")
    return string.Template(text)


def passage_block(source: AskSource) -> str:
    result = source.result
    where = f", page {result.page}" if result.page is not None else ""
    return f"[{source.number}] {result.title}{where}\n{result.text.strip()}"


def system_prompt(sources: Sequence[AskSource]) -> str:
    blocks = "\n\n".join(passage_block(s) for s in sources)
    return load(ANSWER_PROMPT).substitute(passages=blocks or NO_PASSAGES)


def answer_messages(
    sources: Sequence[AskSource], question: str, history: Sequence[AskTurn]
) -> list[Message]:
    """The system prompt with the numbered passages, the earlier turns, then the question."""
    messages: list[Message] = [{"role": "system", "content": system_prompt(sources)}]
    for turn in history:
        messages.append({"role": "user", "content": turn.question})
        messages.append({"role": "assistant", "content": turn.answer})
    messages.append({"role": "user", "content": question})
    return messages


def rewrite_messages(question: str, history: Sequence[AskTurn]) -> list[Message]:
    lines = [f"Person: {t.question}\nAssistant: {t.answer}" for t in history]
    prompt = load(REWRITE_PROMPT).substitute(
        history="\n".join(lines) or "(none)", question=question
    )
    return [{"role": "user", "content": prompt}]
