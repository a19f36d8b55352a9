"""Asking a base end to end: a real service and index, a loopback chat server.

Streaming order, citations resolved to the exact spans of their passages, markers citing no
passage dropped and counted, a partial answer kept when the stream breaks, cancel, rewrite
used when the base says so, the context budget, rate limits, and the conversation kept.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.knowledge.ask import prompt
from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from app.knowledge.types import AnswerState, Base, ErrorCode, TroveError
from tests.conftest import write_files
from tests.fakes import FakeModels
from tests.integration.test_cli import trove
from tests.providers.fake_chat import FakeChat, Fault, words

NOTES = {
    "tomatoes.md": "# Tomatoes\n\nTomatoes need full sun and regular watering in summer.\n",
    "roses.md": "# Roses\n\nPrune roses in late winter; feed them compost in spring.\n",
    "bread.md": "# Sourdough\n\nA sourdough starter needs flour, water and patience.\n",
}
MODEL = "chat:tiny"
REWRITTEN = "sourdough starter ingredients"


def _is_rewrite(messages: list[dict[str, str]]) -> bool:
    return "standalone search query" in messages[-1]["content"]


@pytest.fixture
def chat(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeChat]:
    monkeypatch.setenv("TROVE_KEY_CHAT", "sk-chat-test")
    with FakeChat(reply="Tomatoes need full sun [1].") as server:
        yield server


@pytest.fixture
def svc(tmp_path: Path, chat: FakeChat) -> Iterator[KnowledgeService]:
    service = KnowledgeService(
        tmp_path / "home", models=FakeModels(), extraction=InlineExtraction()
    )
    service.save_provider("chat", "openai", base_url=chat.base_url, models=["tiny"])
    yield service
    service.close()


@pytest.fixture
def base(svc: KnowledgeService, tmp_path: Path) -> Base:
    created = svc.create_base("Garden")
    src = write_files(tmp_path / "notes", NOTES)
    svc.add(created.id, [src / name for name in NOTES])
    svc.run_pending_jobs(created.id)
    return created


def test_the_answer_streams_in_order_and_cites_the_exact_span(
    svc: KnowledgeService, base: Base, chat: FakeChat
) -> None:
    chat.reply = "Tomatoes need full sun [1] and regular watering [1]."
    pieces: list[str] = []
    answer = svc.ask([base.id], "What do tomatoes need?", chat_model=MODEL, on_token=pieces.append)
    assert pieces == words(chat.reply)
    assert answer.turn.answer == chat.reply
    assert answer.turn.state is AnswerState.COMPLETE and answer.error is None
    assert [c.number for c in answer.citations] == [1]
    cited = answer.citations[0].source.result
    assert cited.title == "Tomatoes"
    item = svc.get_item(cited.item_id)
    material = svc.material_file(base.id, item.relative_path or "").read_text("utf-8")
    assert material[cited.char_start : cited.char_end] == cited.text
    assert "full sun" in cited.text
    # The key went to the server, the passages went in the versioned prompt's words.
    request = chat.requests()[0]
    assert request.headers["authorization"] == "Bearer sk-chat-test"
    system = request.json()["messages"][0]["content"]
    assert system.startswith(prompt.load(prompt.ANSWER_PROMPT).template.split("\n")[0])
    assert "[1] Tomatoes\n" in system
    m = answer.metrics
    assert m.first_token_ms is not None and 0 < m.first_token_ms <= m.total_ms
    assert m.retrieval_ms > 0 and m.rewrite_ms == 0


def test_markers_citing_no_passage_are_dropped_and_counted(
    svc: KnowledgeService, base: Base, chat: FakeChat
) -> None:
    chat.reply = "Tomatoes need sun [1][7]. Roses want compost [2, 9]. Bread too [12]."
    answer = svc.ask([base.id], "tomatoes roses sourdough", chat_model=MODEL)
    assert len(answer.turn.sources) == 3
    assert answer.turn.answer == "Tomatoes need sun [1]. Roses want compost [2]. Bread too."
    assert answer.metrics.dropped_markers == 3
    assert [c.number for c in answer.citations] == [1, 2]
    json_form = answer.to_json()
    assert json_form["metrics"]["droppedMarkers"] == 3  # type: ignore[index]


def test_a_stream_that_breaks_keeps_its_partial_answer(
    svc: KnowledgeService, base: Base, chat: FakeChat
) -> None:
    chat.reply = "Tomatoes need full sun [1] and regular watering."
    chat.fail(Fault.reset(5))
    answer = svc.ask([base.id], "What do tomatoes need?", chat_model=MODEL)
    assert answer.turn.state is AnswerState.INTERRUPTED
    assert answer.error is not None and answer.error.code is ErrorCode.ANSWER_INTERRUPTED
    assert answer.turn.answer == "".join(words(chat.reply)[:5])
    assert [c.number for c in answer.citations] == [1]
    kept = svc.ask_turns(base.id)
    assert [(t.answer, t.state) for t in kept] == [(answer.turn.answer, AnswerState.INTERRUPTED)]


def test_cancel_stops_the_stream_and_keeps_what_arrived(
    svc: KnowledgeService, base: Base, chat: FakeChat
) -> None:
    chat.reply = "word " * 300
    chat.delay = 0.01
    cancel = threading.Event()
    pieces: list[str] = []

    def on_token(piece: str) -> None:
        pieces.append(piece)
        if len(pieces) == 2:
            cancel.set()

    answer = svc.ask([base.id], "tomatoes", chat_model=MODEL, on_token=on_token, cancel=cancel)
    assert answer.turn.state is AnswerState.CANCELLED
    assert answer.turn.answer == "word word "
    assert chat.server.wait_for("/v1/chat/completions")[0].client_disconnected


def test_rewrite_is_used_when_the_base_turns_it_on(
    svc: KnowledgeService, base: Base, chat: FakeChat
) -> None:
    def reply(messages: list[dict[str, str]]) -> str:
        return REWRITTEN if _is_rewrite(messages) else "It needs flour and water [1]."

    chat.reply = reply
    svc.ask([base.id], "Tell me about sourdough", chat_model=MODEL)
    plain = svc.ask([base.id], "What goes into it?", chat_model=MODEL)
    assert plain.turn.query == "What goes into it?" and not plain.turn.rewritten
    assert len(chat.requests()) == 2  # no rewrite call while the option is off

    svc.set_ask_rewrite(base.id, True)
    answer = svc.ask([base.id], "What goes into it?", chat_model=MODEL)
    bodies = chat.bodies()
    assert len(bodies) == 4
    rewrite_prompt = bodies[2]["messages"][-1]["content"]
    assert "Tell me about sourdough" in rewrite_prompt  # the conversation so far
    assert answer.turn.query == REWRITTEN and answer.turn.rewritten
    assert answer.metrics.rewrite_ms > 0
    assert answer.turn.sources[0].result.title == "Sourdough"
    # The answer itself is asked with the person's own question, after the earlier turns.
    assert bodies[3]["messages"][-1]["content"] == "What goes into it?"
    assert bodies[3]["messages"][1]["content"] == "Tell me about sourdough"


def test_a_prompt_the_model_finds_too_long_is_sent_again_with_half_the_budget(
    svc: KnowledgeService, base: Base, chat: FakeChat
) -> None:
    roomy = svc.prepare_ask([base.id], "tomatoes roses sourdough", chat_model=MODEL)
    chat.fail(Fault.http(400, "This model's maximum context length is 64 tokens"))
    # All three passages fit this context; half of it (3/8 for the prompt) holds fewer.
    context = (roomy.metrics.context_tokens - 15) * 8 // 3
    answer = svc.ask(
        [base.id], "tomatoes roses sourdough", chat_model=MODEL, context_tokens=context
    )
    first, second = chat.bodies()
    assert first["messages"][0]["content"].count("\n[") == 3  # three passages
    assert len(json.dumps(second)) < len(json.dumps(first))
    assert answer.turn.state is AnswerState.COMPLETE
    assert answer.metrics.passages < 3


def test_the_context_holds_only_the_passages_that_fit(
    svc: KnowledgeService, base: Base, chat: FakeChat
) -> None:
    roomy = svc.prepare_ask([base.id], "tomatoes roses sourdough", chat_model=MODEL)
    # A context whose prompt part (3/4 of it; a quarter is the answer's) is 10 tokens short.
    short = (roomy.metrics.context_tokens - 10) * 4 // 3
    tight = svc.prepare_ask(
        [base.id], "tomatoes roses sourdough", chat_model=MODEL, context_tokens=short
    )
    assert roomy.metrics.passages == 3
    assert 0 < tight.metrics.passages < 3
    assert tight.metrics.context_tokens <= tight.budget.prompt_tokens
    with pytest.raises(TroveError) as overflow:
        svc.prepare_ask([base.id], "tomatoes", chat_model=MODEL, context_tokens=100)
    assert overflow.value.code is ErrorCode.CHAT_CONTEXT_OVERFLOW


def test_a_long_rate_limit_fails_clearly_and_keeps_nothing(
    svc: KnowledgeService, base: Base, chat: FakeChat
) -> None:
    chat.fail(Fault.rate_limited("90"))
    with pytest.raises(TroveError) as failure:
        svc.ask([base.id], "tomatoes", chat_model=MODEL)
    assert failure.value.code is ErrorCode.CHAT_RATE_LIMITED
    assert failure.value.params["seconds"] == 90
    assert svc.ask_turns(base.id) == []


def test_a_provider_that_is_down_says_so(svc: KnowledgeService, base: Base) -> None:
    svc.save_provider("down", "ollama", base_url="http://127.0.0.1:9", models=["m"])
    with pytest.raises(TroveError) as failure:
        svc.ask([base.id], "tomatoes", chat_model="down:m")
    assert failure.value.code is ErrorCode.CHAT_FAILED
    assert failure.value.params["reason"] == "connection_refused"


def test_the_conversation_is_kept_per_base_and_cleared(
    svc: KnowledgeService, base: Base, chat: FakeChat
) -> None:
    other = svc.create_base("Other")
    svc.ask([base.id], "What do tomatoes need?", chat_model=MODEL)
    svc.ask([base.id], "And roses?", chat_model=MODEL)
    assert [t.question for t in svc.ask_turns(base.id)] == ["What do tomatoes need?", "And roses?"]
    assert svc.ask_turns(other.id) == []
    assert chat.bodies()[1]["messages"][1:3] == [
        {"role": "user", "content": "What do tomatoes need?"},
        {"role": "assistant", "content": "Tomatoes need full sun [1]."},
    ]
    restored = svc.ask_turns(base.id)[0]
    assert restored.sources[0].result.title == "Tomatoes"  # citations open after a restart
    assert svc.clear_ask_turns(base.id) == 2
    assert svc.ask_turns(base.id) == []


def test_no_chat_model_chosen_is_a_clear_error(svc: KnowledgeService, base: Base) -> None:
    with pytest.raises(TroveError) as failure:
        svc.ask([base.id], "tomatoes")
    assert failure.value.code is ErrorCode.INVALID_ARGUMENT
    assert "--model" in failure.value.message


def test_trove_ask_json_and_streamed_text(tmp_path: Path, chat: FakeChat) -> None:
    home = tmp_path / "cli-home"
    assert trove(home, "base", "create", "Notes").returncode == 0
    src = write_files(tmp_path / "cli-notes", NOTES)
    assert trove(home, "add", "Notes", str(src), "--wait").returncode == 0
    added = trove(home, "provider", "add", "chat", "--kind", "openai", "--url", chat.base_url)
    assert added.returncode == 0, added.stderr
    env = {"TROVE_KEY_CHAT": "sk-chat-test"}
    chat.reply = "Tomatoes need full sun [1] [5]."

    asked = trove(
        home, "ask", "Notes", "What do tomatoes need?", "--model", MODEL, "--json", env=env
    )
    assert asked.returncode == 0, asked.stderr
    data = json.loads(asked.stdout)
    assert data["answer"] == "Tomatoes need full sun [1]."
    (citation,) = data["citations"]
    assert set(citation) >= {"conceptId", "charStart", "charEnd", "page"}
    assert citation["conceptId"] == "cli-notes/tomatoes.md"
    assert citation["charEnd"] > citation["charStart"]
    assert data["metrics"]["droppedMarkers"] == 1
    assert set(data["metrics"]) >= {"rewriteMs", "retrievalMs", "firstTokenMs", "totalMs"}

    # The model is remembered; the text form streams the answer, then its sources.
    chat.reply = "Prune roses in late winter [1]."
    text = trove(home, "ask", "Notes", "When to prune roses?", env=env)
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith("Prune roses in late winter [1].\n")
    assert "[1] Roses" in text.stdout
    assert "first token" in text.stderr

    tested = trove(home, "provider", "test", "chat", "--chat", "tiny", env=env)
    assert tested.returncode == 0, tested.stderr
    assert "chat model tiny answered" in tested.stdout


def test_a_failed_rewrite_searches_the_question_itself(
    svc: KnowledgeService, base: Base, chat: FakeChat
) -> None:
    svc.set_ask_rewrite(base.id, True)
    chat.fail(Fault.http(503))  # the rewrite's first try
    chat.fail(Fault.http(503))  # and its retry
    answer = svc.ask([base.id], "What do tomatoes need?", chat_model=MODEL)
    assert answer.turn.query == "What do tomatoes need?"
    assert answer.turn.answer == "Tomatoes need full sun [1]."
    assert len(chat.requests()) == 3


def test_trove_base_set_ask_rewrite_turns_the_rewrite_on(tmp_path: Path, chat: FakeChat) -> None:
    home = tmp_path / "cli-home"
    assert trove(home, "base", "create", "Notes").returncode == 0
    src = write_files(tmp_path / "cli-notes", NOTES)
    assert trove(home, "add", "Notes", str(src), "--wait").returncode == 0
    assert (
        trove(
            home, "provider", "add", "chat", "--kind", "openai", "--url", chat.base_url
        ).returncode
        == 0
    )
    switched = trove(home, "base", "set", "Notes", "--ask-rewrite", "on")
    assert switched.returncode == 0, switched.stderr
    assert "question rewrite on" in switched.stderr
    chat.reply = lambda messages: (
        "when to prune roses" if _is_rewrite(messages) else "In late winter [1]."
    )
    asked = trove(
        home, "ask", "Notes", "And the roses?", "--model", MODEL, "--json", "--fresh",
        env={"TROVE_KEY_CHAT": "sk-chat-test"},
    )  # fmt: skip
    assert asked.returncode == 0, asked.stderr
    data = json.loads(asked.stdout)
    assert data["rewritten"] is True and data["query"] == "when to prune roses"
    assert data["citations"][0]["conceptId"].endswith("roses.md")
    assert data["metrics"]["rewriteMs"] > 0
