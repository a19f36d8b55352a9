"""Engine errors in the person's language: every code and provider reason has a translated
message, the engine's English shows only as a "Details" line where it adds something, and
the engine gives the codes, reasons and params the window needs (loopback servers only)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QApplication

from app.knowledge.jobs.recovery import INTERRUPTED_MESSAGE
from app.knowledge.service import KnowledgeService
from app.knowledge.types import (
    Degradation,
    ErrorCode,
    ErrorReason,
    SearchStage,
    SkipReason,
    TroveError,
)
from app.providers.http import ProviderHttp
from app.providers.interfaces import ProviderError
from app.ui import errors, i18n
from tests.fakes import FakeModels
from tests.httpserver import LoopbackServer, Response
from tests.ui.test_i18n import english_words

GENERIC = "An unexpected error occurred."
PARAMS = {
    "provider": "测试服务",
    "address": "127.0.0.1:9",
    "status": 401,
    "model": "向量",
    "got": 8,
    "expected": 16,
    "url": "ftp://127.0.0.1",
    "env_var": "TROVE_1",  # a name the person types as it is
    "server": "",
}


@pytest.fixture
def english(qapp: QApplication) -> Iterator[None]:
    translators = i18n.install_translators(qapp, "en")
    yield
    i18n.remove_translators(qapp, translators)


@pytest.fixture
def chinese(qapp: QApplication) -> Iterator[None]:
    translators = i18n.install_translators(qapp, "zh_CN")
    assert QCoreApplication.translate("MainWindow", "Content") == "内容"
    yield
    i18n.remove_translators(qapp, translators)


def provider_error(url: str, *, key: str | None = None) -> ProviderError:
    """What one GET of /v1/models against `url` raises."""
    http = ProviderHttp(url, name="测试服务", api_key=key)
    try:
        with pytest.raises(ProviderError) as raised:
            http.get_json("/v1/models")
    finally:
        http.close()
    return raised.value


# -- every code, every reason ------------------------------------------------------------


@pytest.mark.parametrize("code", list(ErrorCode))
def test_every_code_has_its_own_translated_message(chinese: None, code: ErrorCode) -> None:
    assert errors.message(code) != QCoreApplication.translate("errors", GENERIC)
    assert english_words(errors.headline(code)) == []
    assert english_words(errors.message(code)) == []


@pytest.mark.parametrize("reason", list(ErrorReason))
def test_every_provider_reason_is_said_in_chinese(chinese: None, reason: ErrorReason) -> None:
    said = errors.message(ErrorCode.FETCH_FAILED, {**PARAMS, "reason": str(reason)})
    assert said != errors.message(ErrorCode.FETCH_FAILED)  # the reason, not the code, speaks
    assert english_words(said) == [], said


def test_an_unknown_code_falls_back_to_a_generic_message(english: None) -> None:
    assert errors.headline("SOMETHING_NEW") == "Something went wrong"
    assert errors.message("SOMETHING_NEW") == GENERIC


# -- the engine's English: a details line at most -----------------------------------------


def test_a_message_without_news_drops_the_engine_english(english: None) -> None:
    exc = TroveError(ErrorCode.NO_SEARCHABLE_TOKEN, "the query has no searchable word")
    headline, text = errors.describe(exc)
    assert headline == "The query has no searchable words"
    assert "no searchable word;" not in text and "Details" not in text
    assert text == errors.message(ErrorCode.NO_SEARCHABLE_TOKEN)


def test_a_parser_reason_stays_as_a_details_line(english: None) -> None:
    text = errors.item_error_text(ErrorCode.READ_FAILED, "PdfReadError: EOF marker not found")
    headline, explanation, details = text.split("\n")
    assert headline == "The file could not be read"
    assert explanation == errors.message(ErrorCode.READ_FAILED)
    assert details == "Details: PdfReadError: EOF marker not found"


def test_trove_english_details_stay_out_of_a_chinese_window(chinese: None) -> None:
    """A reader's reason (English prose) is for logs and "Copy error" there; the translated
    message stands alone. A server's reply is still quoted: it is the server's words."""
    said = errors.item_error_text(
        ErrorCode.READ_FAILED, "the PDF is damaged: Stream has ended unexpectedly"
    )
    assert "Stream" not in said and english_words(said) == []
    assert said.startswith(errors.headline(ErrorCode.READ_FAILED))


def test_interrupted_and_empty_items_read_fully_in_chinese(chinese: None) -> None:
    interrupted = errors.item_error_text(ErrorCode.INDEXING_INTERRUPTED, INTERRUPTED_MESSAGE)
    empty = errors.item_error_text(
        ErrorCode.EMPTY_INDEXABLE_TEXT,
        "no text could be extracted from this source (is it empty, or only images?)",
    )
    assert interrupted.startswith("索引被中断\n") and "重新索引" in interrupted
    assert empty.startswith("文件中没有可索引的文本\n")
    assert english_words(interrupted) == [] and english_words(empty) == []


def test_a_server_reply_is_a_details_line_only_for_plain_http_errors(english: None) -> None:
    failing = {**PARAMS, "reason": ErrorReason.HTTP_STATUS.value, "status": 500}
    text = errors.explain(ErrorCode.EMBEDDING_FAILED, "english", {**failing, "server": "boom"})
    assert text == "测试服务 answered with an error (HTTP 500).\nDetails: boom"
    refused = {**PARAMS, "reason": ErrorReason.KEY_REJECTED.value, "server": "Bad key sk-1"}
    assert "Bad key" not in errors.explain(ErrorCode.PROVIDER_AUTH_FAILED, "english", refused)


def test_skipped_sources_say_why_in_chinese_and_keep_the_cli_text(
    chinese: None, tmp_path: Path
) -> None:
    service = KnowledgeService(tmp_path / "home", models=FakeModels())
    try:
        base = service.create_base("kb")
        (tmp_path / "a.md").write_text("# A\n\nsame text\n", encoding="utf-8")
        (tmp_path / "b.md").write_text("# A\n\nsame text\n", encoding="utf-8")
        service.add(base.id, [tmp_path / "a.md"])
        report = service.add(base.id, [tmp_path / "a.md", tmp_path / "b.md"])
    finally:
        service.close()
    (_, again), (_, copy) = report.skipped
    # The CLI and agents print the reason as before.
    assert again == "already in this knowledge base"
    assert copy.startswith("same content as ")
    assert isinstance(again, SkipReason) and again.code is ErrorCode.ALREADY_IN_BASE
    assert isinstance(copy, SkipReason) and copy.same_as == str((tmp_path / "a.md").resolve())
    assert errors.skip_reason_text(again) == "此来源已在知识库中。"
    said = errors.skip_reason_text(copy)
    assert english_words(said) == [] and "已" in said


def test_add_errors_translate_their_code(chinese: None) -> None:
    text = errors.add_error_text("SOURCE_MISSING: no such file or folder")
    assert text.startswith(errors.message(ErrorCode.SOURCE_MISSING))
    assert errors.add_error_text("not a code: kept") == "not a code: kept"


def test_degraded_search_notices_say_why(chinese: None) -> None:
    refused = Degradation(
        SearchStage.RERANK,
        ErrorCode.RERANK_FAILED,
        "rr: connection failed; results are not reranked",
        {"reason": ErrorReason.CONNECTION_REFUSED.value, "address": "127.0.0.1:9"},
    )
    skipped = Degradation(
        SearchStage.RERANK, ErrorCode.RERANK_FAILED, "not asked: ...", not_asked=True
    )
    for notice in (refused, skipped):
        assert english_words(errors.degradation_text(notice)) == []
    assert "127.0.0.1:9" in errors.degradation_text(refused)


# -- the engine gives reasons and params ----------------------------------------------------


def test_refused_connections_carry_the_reason_and_the_address() -> None:
    with LoopbackServer() as gone:
        url = gone.base_url
    exc = provider_error(url)
    assert exc.reason == ErrorReason.CONNECTION_REFUSED
    assert exc.params["address"] == url.removeprefix("http://")
    assert "connection failed" in exc.message  # the CLI's English is unchanged


@pytest.mark.parametrize(
    ("status", "key", "reason"),
    [
        (401, "sk-wrong", ErrorReason.KEY_REJECTED),
        (401, None, ErrorReason.KEY_MISSING),
        (404, None, ErrorReason.NOT_FOUND),
        (400, None, ErrorReason.HTTP_STATUS),
    ],
)
def test_http_errors_carry_the_reason_status_and_server_reply(
    status: int, key: str | None, reason: ErrorReason
) -> None:
    with LoopbackServer() as server:
        server.route(
            "/v1/models", Response.json({"error": {"message": f"said {status}"}}, status=status)
        )
        exc = provider_error(server.base_url, key=key)
    assert exc.reason == reason
    assert exc.params["status"] == status and exc.params["provider"] == "测试服务"
    assert exc.params["server"] == f"said {status}"
    assert "sk-wrong" not in str(exc.params)


def test_engine_errors_keep_the_params() -> None:
    """The engine turns a ProviderError into a TroveError with the same reason and names."""
    from app.knowledge.provider_errors import provider_failure

    with LoopbackServer() as gone:
        url = gone.base_url
    failure = provider_failure(provider_error(url), ErrorCode.FETCH_FAILED)
    assert failure.code is ErrorCode.EMBEDDING_FAILED
    assert failure.params["reason"] == ErrorReason.CONNECTION_REFUSED
    assert failure.params["provider"] == "测试服务"
