"""Human words for engine errors. The engine's message (often a path or a server reply) is kept
as the detail; the headline is translated."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication

from app.knowledge.types import ErrorCode, TroveError


def headline(code: str | None) -> str:
    """A short translated description of an error code (unknown codes: a generic one)."""
    titles: dict[str, str] = {
        ErrorCode.EMPTY_INDEXABLE_TEXT: QCoreApplication.translate(
            "errors", "The file has no text that can be indexed"
        ),
        ErrorCode.INDEXING_INTERRUPTED: QCoreApplication.translate(
            "errors", "Indexing was interrupted"
        ),
        ErrorCode.SOURCE_MISSING: QCoreApplication.translate("errors", "The original is missing"),
        ErrorCode.UNSUPPORTED_FILE_TYPE: QCoreApplication.translate(
            "errors", "This file type is not supported"
        ),
        ErrorCode.FILE_TOO_LARGE: QCoreApplication.translate("errors", "The file is too large"),
        ErrorCode.READ_FAILED: QCoreApplication.translate("errors", "The file could not be read"),
        ErrorCode.EMBEDDING_FAILED: QCoreApplication.translate(
            "errors", "The embedding model failed"
        ),
        ErrorCode.RERANK_FAILED: QCoreApplication.translate("errors", "The rerank model failed"),
        ErrorCode.INDEX_CORRUPT: QCoreApplication.translate(
            "errors", "The index is damaged — run restore"
        ),
        ErrorCode.CATALOG_DAMAGED: QCoreApplication.translate("errors", "The catalog is damaged"),
        ErrorCode.KEYCHAIN_UNAVAILABLE: QCoreApplication.translate(
            "errors", "The system keychain is not available"
        ),
        ErrorCode.PROVIDER_AUTH_FAILED: QCoreApplication.translate(
            "errors", "The provider refused the API key"
        ),
        ErrorCode.FETCH_FAILED: QCoreApplication.translate(
            "errors", "The page could not be fetched"
        ),
        ErrorCode.ALL_CHILDREN_FAILED: QCoreApplication.translate(
            "errors", "Every item inside failed"
        ),
        ErrorCode.BASE_FAILED: QCoreApplication.translate(
            "errors", "The knowledge base needs to be restored"
        ),
        ErrorCode.BASE_NOT_FOUND: QCoreApplication.translate(
            "errors", "The knowledge base no longer exists"
        ),
        ErrorCode.BASE_AMBIGUOUS: QCoreApplication.translate(
            "errors", "Several knowledge bases have this name"
        ),
        ErrorCode.ITEM_NOT_FOUND: QCoreApplication.translate("errors", "The item no longer exists"),
        ErrorCode.NO_SEARCHABLE_TOKEN: QCoreApplication.translate(
            "errors", "The query has no searchable words"
        ),
        ErrorCode.ILLEGAL_TRANSITION: QCoreApplication.translate("errors", "The item is busy"),
        ErrorCode.INVALID_ARGUMENT: QCoreApplication.translate("errors", "Invalid value"),
        ErrorCode.MODEL_NOT_AVAILABLE: QCoreApplication.translate(
            "errors", "The model is not available"
        ),
        ErrorCode.UNSAFE_PATH: QCoreApplication.translate("errors", "Unsafe path"),
        ErrorCode.STORAGE_FULL: QCoreApplication.translate("errors", "The disk is full"),
        ErrorCode.STORAGE_READ_ONLY: QCoreApplication.translate(
            "errors", "The data folder is read-only"
        ),
    }
    found = titles.get(str(code or ""))
    return (
        found if found is not None else QCoreApplication.translate("errors", "Something went wrong")
    )


def describe(exc: BaseException) -> tuple[str, str]:
    """(headline, detail) for an exception raised by an engine call."""
    if isinstance(exc, TroveError):
        return headline(exc.code), exc.message
    if isinstance(exc, OSError):
        return QCoreApplication.translate("errors", "A file operation failed"), str(exc)
    return QCoreApplication.translate(
        "errors", "Something went wrong"
    ), f"{type(exc).__name__}: {exc}"
