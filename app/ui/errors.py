"""Human words for engine errors. The engine's message (often a path or a server reply) is kept
as the detail; the headline is translated."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication

from app.knowledge.types import ErrorCode, TroveError


def _t(text: str) -> str:
    return QCoreApplication.translate("errors", text)


def headline(code: str | None) -> str:
    """A short translated description of an error code (unknown codes: a generic one)."""
    titles = {
        ErrorCode.EMPTY_INDEXABLE_TEXT: _t("The file has no text that can be indexed"),
        ErrorCode.INDEXING_INTERRUPTED: _t("Indexing was interrupted"),
        ErrorCode.SOURCE_MISSING: _t("The original is missing"),
        ErrorCode.UNSUPPORTED_FILE_TYPE: _t("This file type is not supported"),
        ErrorCode.FILE_TOO_LARGE: _t("The file is too large"),
        ErrorCode.READ_FAILED: _t("The file could not be read"),
        ErrorCode.EMBEDDING_FAILED: _t("The embedding model failed"),
        ErrorCode.PROVIDER_AUTH_FAILED: _t("The provider refused the API key"),
        ErrorCode.FETCH_FAILED: _t("The page could not be fetched"),
        ErrorCode.ALL_CHILDREN_FAILED: _t("Every item inside failed"),
        ErrorCode.BASE_FAILED: _t("The knowledge base needs to be restored"),
        ErrorCode.BASE_NOT_FOUND: _t("The knowledge base no longer exists"),
        ErrorCode.BASE_AMBIGUOUS: _t("Several knowledge bases have this name"),
        ErrorCode.ITEM_NOT_FOUND: _t("The item no longer exists"),
        ErrorCode.NO_SEARCHABLE_TOKEN: _t("The query has no searchable words"),
        ErrorCode.ILLEGAL_TRANSITION: _t("The item is busy"),
        ErrorCode.INVALID_ARGUMENT: _t("Invalid value"),
        ErrorCode.MODEL_NOT_AVAILABLE: _t("The model is not available"),
        ErrorCode.UNSAFE_PATH: _t("Unsafe path"),
    }
    try:
        return titles[ErrorCode(code or "")]
    except ValueError:
        return _t("Something went wrong")


def describe(exc: BaseException) -> tuple[str, str]:
    """(headline, detail) for an exception raised by an engine call."""
    if isinstance(exc, TroveError):
        return headline(exc.code), exc.message
    if isinstance(exc, OSError):
        return _t("A file operation failed"), str(exc)
    return _t("Something went wrong"), f"{type(exc).__name__}: {exc}"
