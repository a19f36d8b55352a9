"""An answer ends within its time limit and its size limit, whatever the chat server streams
(issue 30): a token every 10 ms for ever, or one 30 MB token. What came before the limit is
kept and marked as broken off, in the engine's answer, the stored conversation and the CLI.
Before, the endless stream ran until Ctrl-C and the 30 MB token went whole into the answer
and the catalog."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from app.knowledge.jobs.reader_pool import InlineExtraction
from app.knowledge.service import KnowledgeService
from app.knowledge.types import AnswerState, Base, ErrorCode, ErrorReason
from app.providers.chat import MAX_ANSWER_CHARS
from tests.conftest import write_files
from tests.fakes import FakeModels
from tests.integration.test_cli import trove
from tests.providers.fake_chat import ENDLESS_LIFETIME, FakeChat, Fault, words

NOTES = {"tomatoes.md": "# Tomatoes\n\nTomatoes need full sun and regular watering in summer.\n"}
MODEL = "chat:tiny"
REPLY = "Tomatoes need full sun [1]."
SECONDS = 1.5
# Far above SECONDS (a loaded machine; the CLI starts Python too), far below how long the
# endless stream goes on.
BOUND = 15.0
assert ENDLESS_LIFETIME > BOUND
HUGE = 30 * 1024 * 1024


@pytest.fixture
def chat(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeChat]:
    monkeypatch.setenv("TROVE_KEY_CHAT", "sk-chat-test")
    with FakeChat(reply=REPLY) as server:
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


def test_an_endless_answer_ends_at_its_time_limit_and_is_kept_as_broken_off(
    svc: KnowledgeService, base: Base, chat: FakeChat
) -> None:
    chat.fail(Fault.endless(gap=0.01))
    pieces: list[str] = []
    started = time.monotonic()
    answer = svc.ask(
        [base.id], "tomatoes", chat_model=MODEL, on_token=pieces.append, answer_seconds=SECONDS
    )
    elapsed = time.monotonic() - started
    assert elapsed < BOUND, f"the answer took {elapsed:.1f} s"
    assert answer.turn.state is AnswerState.INTERRUPTED
    assert answer.error is not None and answer.error.code is ErrorCode.ANSWER_INTERRUPTED
    assert answer.error.params["reason"] == ErrorReason.ANSWER_TIME_LIMIT
    assert answer.turn.answer == "".join(pieces) and answer.turn.answer.startswith("t0 t1 ")
    [kept] = svc.ask_turns(base.id)
    assert (kept.answer, kept.state) == (answer.turn.answer, AnswerState.INTERRUPTED)


def test_a_30_mb_token_never_reaches_the_answer_or_the_conversation(
    svc: KnowledgeService, base: Base, chat: FakeChat
) -> None:
    chat.fail(Fault.huge(after=3, size=HUGE))
    answer = svc.ask([base.id], "tomatoes", chat_model=MODEL)
    assert answer.turn.state is AnswerState.INTERRUPTED
    assert answer.error is not None
    assert answer.error.params["reason"] == ErrorReason.ANSWER_SIZE_LIMIT
    assert answer.turn.answer == "".join(words(REPLY)[:3])
    [kept] = svc.ask_turns(base.id)
    assert kept.answer == answer.turn.answer and kept.state is AnswerState.INTERRUPTED


def test_an_answer_longer_than_the_limit_is_kept_up_to_it(
    svc: KnowledgeService, base: Base, chat: FakeChat
) -> None:
    chat.fail(Fault.endless(gap=0.0))
    answer = svc.ask([base.id], "tomatoes", chat_model=MODEL)
    assert answer.turn.state is AnswerState.INTERRUPTED
    assert answer.error is not None
    assert answer.error.params["reason"] == ErrorReason.ANSWER_SIZE_LIMIT
    [kept] = svc.ask_turns(base.id)
    assert len(kept.answer) == MAX_ANSWER_CHARS


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "TROVE_HOME"}


def _cli_home(tmp_path: Path, chat: FakeChat) -> Path:
    home = tmp_path / "cli-home"
    assert trove(home, "base", "create", "Notes").returncode == 0
    src = write_files(tmp_path / "cli-notes", NOTES)
    assert trove(home, "add", "Notes", str(src), "--wait").returncode == 0
    added = trove(home, "provider", "add", "chat", "--kind", "openai", "--url", chat.base_url)
    assert added.returncode == 0, added.stderr
    return home


def _stored(home: Path) -> list[tuple[str, AnswerState]]:
    svc = KnowledgeService(home, extraction=InlineExtraction())
    try:
        base = svc.resolve_base("Notes")
        return [(t.answer, t.state) for t in svc.ask_turns(base.id)]
    finally:
        svc.close()


def test_trove_ask_against_an_endless_stream_ends_at_its_time_limit(
    tmp_path: Path, chat: FakeChat
) -> None:
    home = _cli_home(tmp_path, chat)
    chat.fail(Fault.endless(gap=0.01))
    cmd = [sys.executable, "-m", "app", "--home", str(home), "ask", "Notes", "tomatoes"]
    proc = subprocess.Popen(
        [*cmd, "--model", MODEL, "--time-limit", str(SECONDS)],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # Timed from the chat request on: starting Python is not the answer.
        end = time.monotonic() + 60
        while not chat.requests() and proc.poll() is None and time.monotonic() < end:
            time.sleep(0.01)
        assert chat.requests(), "trove ask never asked the chat model"
        asked_at = time.monotonic()
        stdout, stderr = proc.communicate(timeout=120)
        elapsed = time.monotonic() - asked_at
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    asked = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    assert elapsed < BOUND, f"trove ask took {elapsed:.1f} s after asking"
    assert asked.returncode == 1, asked.stderr
    assert asked.stdout.startswith("t0 t1 ")
    assert "warning: the answer broke off (ANSWER_INTERRUPTED)" in asked.stderr
    assert f"longer than {SECONDS:g} s, the answer's time limit" in asked.stderr
    [(answer, state)] = _stored(home)
    assert state is AnswerState.INTERRUPTED and asked.stdout.startswith(answer)

    chat.fail(Fault.endless(gap=0.01))
    asked = trove(home, "ask", "Notes", "tomatoes", "--time-limit", "1", "--json")
    data = json.loads(asked.stdout)
    assert data["state"] == "interrupted" and data["error"]["code"] == "ANSWER_INTERRUPTED"


def _peak_rss(cmd: list[str], env: dict[str, str]) -> tuple[int, subprocess.CompletedProcess[str]]:
    """Run `cmd`, sampling its resident memory every 10 ms; (peak bytes, its result)."""
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    watched = psutil.Process(proc.pid)
    peak = 0
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            peak = max(peak, watched.memory_info().rss)
        except psutil.Error:
            break
        time.sleep(0.01)
    stdout, stderr = proc.communicate(timeout=30)
    return peak, subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)


def test_trove_ask_never_holds_a_30_mb_token(tmp_path: Path, chat: FakeChat) -> None:
    home = _cli_home(tmp_path, chat)
    env = _env()
    cmd = [sys.executable, "-m", "app", "--home", str(home), "ask", "Notes", "tomatoes"]
    usual, done = _peak_rss([*cmd, "--model", MODEL], env)
    assert done.returncode == 0, done.stderr
    chat.fail(Fault.huge(after=3, size=HUGE))
    peak, done = _peak_rss(cmd, env)
    assert done.returncode == 1, done.stderr
    assert "the answer's size limit" in done.stderr
    assert done.stdout.startswith("".join(words(REPLY)[:3]))
    # Taken whole, the token would be held several times over (bytes, text, the answer).
    assert peak - usual < HUGE // 2, f"{(peak - usual) / 2**20:.0f} MB above a usual answer"
    answers = [answer for answer, _ in _stored(home)]
    assert answers[-1] == "".join(words(REPLY)[:3])
