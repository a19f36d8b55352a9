"""Human words for engine errors, in the person's language.

The engine raises stable codes (ErrorCode) with an English message for logs, the CLI and
agents, and, where a sentence needs them, structured params (a provider failure's `reason`,
an HTTP status, a model). Here every code becomes a translated headline and a translated
message. The engine's English is shown only as a secondary "Details" line, only where it
adds something the translated text cannot say (a path, a parser's or a server's own words),
and — except a server's reply, quoted as it came — only when the window speaks English;
never as the only text.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

from PySide6.QtCore import QCoreApplication, QLocale

from app.knowledge.types import Degradation, ErrorCode, ErrorReason, SearchStage, TroveError

Params = Mapping[str, str | int]


# Codes whose English message carries specifics (a path, a size, the reader's or a server's
# own words) worth a "Details" line; for the others the translated message says it all.
_DETAILED_CODES = frozenset(
    {
        ErrorCode.SOURCE_MISSING,
        ErrorCode.FILE_TOO_LARGE,
        ErrorCode.READ_FAILED,
        ErrorCode.EMBEDDING_FAILED,
        ErrorCode.RERANK_FAILED,
        ErrorCode.PROVIDER_AUTH_FAILED,
        ErrorCode.KEYCHAIN_UNAVAILABLE,
        ErrorCode.FETCH_FAILED,
        ErrorCode.STORAGE_FULL,
        ErrorCode.STORAGE_READ_ONLY,
        ErrorCode.BASE_FAILED,
        ErrorCode.BASE_AMBIGUOUS,
        ErrorCode.INVALID_ARGUMENT,
        ErrorCode.MODEL_NOT_AVAILABLE,
        ErrorCode.UNSAFE_PATH,
        ErrorCode.INDEX_CORRUPT,
        ErrorCode.SERVER_UNAVAILABLE,
        ErrorCode.CATALOG_DAMAGED,
        ErrorCode.ARCHIVE_DAMAGED,
        ErrorCode.ARCHIVE_UNSAFE,
        ErrorCode.IMPORTED_SOURCE,
        ErrorCode.IMAGE_TOO_LARGE,
        ErrorCode.OCR_FAILED,
        ErrorCode.CHAT_FAILED,
    }
)
# Provider failures whose server reply says more than the translated sentence.
_SERVER_REPLY_REASONS = frozenset({ErrorReason.HTTP_STATUS, ErrorReason.NOT_JSON})


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
        ErrorCode.OCR_UNAVAILABLE: QCoreApplication.translate(
            "errors", "Text recognition (OCR) is not installed"
        ),
        ErrorCode.IMAGE_TOO_LARGE: QCoreApplication.translate("errors", "The picture is too large"),
        ErrorCode.OCR_FAILED: QCoreApplication.translate("errors", "Text recognition failed"),
        ErrorCode.READ_FAILED: QCoreApplication.translate("errors", "The file could not be read"),
        ErrorCode.EMBEDDING_FAILED: QCoreApplication.translate(
            "errors", "The embedding model failed"
        ),
        ErrorCode.RERANK_FAILED: QCoreApplication.translate("errors", "The rerank model failed"),
        ErrorCode.INDEX_CORRUPT: QCoreApplication.translate(
            "errors", "The index is damaged — run restore"
        ),
        ErrorCode.CATALOG_DAMAGED: QCoreApplication.translate("errors", "The catalog is damaged"),
        ErrorCode.SERVER_UNAVAILABLE: QCoreApplication.translate(
            "errors", "The PostgreSQL server cannot be used"
        ),
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
        ErrorCode.ALREADY_IN_BASE: QCoreApplication.translate(
            "errors", "Already in this knowledge base"
        ),
        # -- portable bases --
        ErrorCode.ARCHIVE_DAMAGED: QCoreApplication.translate(
            "errors", "The export file is damaged"
        ),
        ErrorCode.ARCHIVE_NEWER_FORMAT: QCoreApplication.translate(
            "errors", "The export file needs a newer Trove"
        ),
        ErrorCode.ARCHIVE_UNSAFE: QCoreApplication.translate(
            "errors", "The export file was not made by Trove"
        ),
        ErrorCode.IMPORTED_SOURCE: QCoreApplication.translate(
            "errors", "This came with an imported knowledge base"
        ),
        ErrorCode.CANCELLED: QCoreApplication.translate("errors", "Cancelled"),
        ErrorCode.CHAT_FAILED: QCoreApplication.translate("errors", "The chat model failed"),
        ErrorCode.CHAT_RATE_LIMITED: QCoreApplication.translate("errors", "The chat model is busy"),
        ErrorCode.CHAT_CONTEXT_OVERFLOW: QCoreApplication.translate(
            "errors", "The passages do not fit the chat model"
        ),
        ErrorCode.ANSWER_INTERRUPTED: QCoreApplication.translate("errors", "The answer broke off"),
    }
    found = titles.get(str(code or ""))
    return (
        found if found is not None else QCoreApplication.translate("errors", "Something went wrong")
    )


def message(code: str | None, params: Params | None = None) -> str:
    """The full translated explanation of an error: what happened and what to do."""
    given = params or {}
    reason = given.get("reason")
    if isinstance(reason, str):
        said = _model_message(str(code or ""), reason, given) or _provider_message(reason, given)
        if said:
            return said
    return _code_message(str(code or ""), given)


# Model store failures whose engine words (which field of a manifest, what a file looks
# like) add to the translated sentence, for a window that speaks English.
_MODEL_DETAILED_REASONS = frozenset({ErrorReason.BAD_MANIFEST, ErrorReason.NOT_A_MODEL})
# Network failures of a model download (the engine gave up after its attempts).
_DOWNLOAD_NETWORK_REASONS = frozenset(
    {
        ErrorReason.TIMED_OUT,
        ErrorReason.CONNECTION_FAILED,
        ErrorReason.CONNECTION_REFUSED,
        ErrorReason.HOST_NOT_FOUND,
        ErrorReason.HTTP_STATUS,
    }
)


def _model_message(code: str, reason: str, params: Params) -> str:
    """A local model's download, import or removal failure; "" for other failures."""
    model = str(params.get("model") or "")
    file = str(params.get("file") or "")
    downloading = code == ErrorCode.FETCH_FAILED
    if reason == ErrorReason.MODEL_IN_USE:
        return QCoreApplication.translate(
            "errors",
            "“{0}” is used by these knowledge bases: {1}. Give them another model (or delete "
            "them) first.",
        ).format(model, params.get("bases", ""))
    if reason == ErrorReason.CHECKSUM_MISMATCH:
        if downloading:
            return QCoreApplication.translate(
                "errors",
                "The downloaded file {0} does not match the checksum the model hub publishes, "
                "so it was deleted. Download again, or use another mirror.",
            ).format(file)
        return QCoreApplication.translate(
            "errors",
            "{0} does not match the checksum its trove-model.json records: the copy is "
            "damaged or incomplete. Copy the folder again.",
        ).format(file)
    if reason == ErrorReason.SIZE_MISMATCH:
        return QCoreApplication.translate(
            "errors",
            "The server sent {0} with another size than the model hub announced, so it was "
            "deleted. Download again, or use another mirror.",
        ).format(file)
    if reason == ErrorReason.NOT_A_MODEL:
        if downloading:
            return QCoreApplication.translate(
                "errors",
                "The server sent something other than the model file {0} (an error page?), "
                "so it was deleted. Use another mirror.",
            ).format(file)
        return QCoreApplication.translate(
            "errors", "{0} is not a usable model file: it is empty, or of another kind."
        ).format(file)
    if reason == ErrorReason.MODEL_BUSY:
        return QCoreApplication.translate(
            "errors",
            "Another download, import or removal of “{0}” is running (in this or another "
            "Trove window or command). Wait for it to finish, then try again.",
        ).format(model)
    if reason == ErrorReason.MODEL_FILE_OPEN:
        return QCoreApplication.translate(
            "errors",
            "A file of “{0}” is in use. Stop the searches and indexing that use it (or close "
            "Trove), then try again.",
        ).format(model)
    if reason == ErrorReason.DISK_FULL and params.get("needed"):
        return QCoreApplication.translate(
            "errors",
            "There is not enough free disk space: the model needs about {0} and {1} is free. "
            "Free some space, then try again (a download resumes where it stopped).",
        ).format(_megabytes(params.get("needed")), _megabytes(params.get("free")))
    if reason == ErrorReason.DISK_FULL:
        return QCoreApplication.translate(
            "errors",
            "The disk filled up while the model was being written. Free some space, then try "
            "again (a download resumes where it stopped).",
        )
    if reason == ErrorReason.HUB_UNREACHABLE:
        return QCoreApplication.translate(
            "errors",
            "Cannot reach {0}. Check the internet connection; or set a mirror of the model "
            "hub in the Models window (for example https://hf-mirror.com); or download the "
            "model on a connected computer, copy its folder here and import it.",
        ).format(params.get("host", ""))
    if reason == ErrorReason.NOT_A_FOLDER:
        return QCoreApplication.translate("errors", "{0} is not a folder.").format(
            params.get("folder", "")
        )
    if reason == ErrorReason.NO_MANIFEST:
        return QCoreApplication.translate(
            "errors",
            "{0} has no trove-model.json. Choose the whole folder of an installed model "
            "(the folder Trove made for it in its data folder on another computer).",
        ).format(params.get("folder", ""))
    if reason == ErrorReason.FILES_MISSING:
        return QCoreApplication.translate(
            "errors", "{0} lacks files its trove-model.json names: {1}."
        ).format(params.get("folder", ""), params.get("files", ""))
    if reason == ErrorReason.BAD_MANIFEST:
        return QCoreApplication.translate(
            "errors",
            "The folder's trove-model.json cannot be used: it is damaged, incomplete or of a "
            "newer Trove.",
        )
    if downloading and reason == ErrorReason.NOT_FOUND and file:
        return QCoreApplication.translate(
            "errors",
            "{0} does not have the file {1} of this model (HTTP 404): the mirror may not carry "
            "it. Try another mirror, or import the model.",
        ).format(params.get("server", ""), file)
    if (
        downloading
        and reason in _DOWNLOAD_NETWORK_REASONS
        and params.get("url")
        and not params.get("provider")
    ):
        return QCoreApplication.translate(
            "errors",
            "The download from {0} stopped after several attempts. What was downloaded is "
            "kept: download again to resume it.",
        ).format(urlsplit(str(params["url"])).netloc)
    return ""


def _megabytes(size: str | int | None) -> str:
    try:
        value = int(size or 0)
    except ValueError:
        return str(size)
    return QCoreApplication.translate("errors", "{0} MB").format(f"{value / 1_000_000:,.0f}")


def _code_message(code: str, params: Params) -> str:
    if code == ErrorCode.MODEL_NOT_AVAILABLE and params.get("model"):
        return QCoreApplication.translate(
            "errors", "The model “{0}” is not available. Choose another one in the settings."
        ).format(params["model"])
    if code == ErrorCode.SERVER_UNAVAILABLE and params.get("server"):
        return QCoreApplication.translate(
            "errors",
            "Trove could not connect to the PostgreSQL server at {0}, or it refused the "
            "login. Check the address, the password and that the server is running.",
        ).format(params["server"])
    texts: dict[str, str] = {
        ErrorCode.EMPTY_INDEXABLE_TEXT: QCoreApplication.translate(
            "errors", "No text could be extracted from this source. Is it empty, or only images?"
        ),
        ErrorCode.INDEXING_INTERRUPTED: QCoreApplication.translate(
            "errors",
            "Trove was closed, or the time limit ran out, while this item was being "
            "processed. Reindex it to finish.",
        ),
        ErrorCode.SOURCE_MISSING: QCoreApplication.translate(
            "errors", "The original file, folder or page is gone. Delete the item and add it again."
        ),
        ErrorCode.UNSUPPORTED_FILE_TYPE: QCoreApplication.translate(
            "errors", "Trove cannot read text from this kind of source."
        ),
        ErrorCode.FILE_TOO_LARGE: QCoreApplication.translate(
            "errors", "The source is larger than Trove indexes."
        ),
        ErrorCode.OCR_UNAVAILABLE: QCoreApplication.translate(
            "errors",
            "Reading text from scans and pictures needs Trove's OCR component. Install "
            "Trove with it (the “ocr” extra), then reindex.",
        ),
        ErrorCode.IMAGE_TOO_LARGE: QCoreApplication.translate(
            "errors",
            "The picture has more pixels than Trove reads (it may be an image bomb). "
            "Scale it down, then add it again.",
        ),
        ErrorCode.OCR_FAILED: QCoreApplication.translate(
            "errors",
            "Text could not be recognised on this document's pages (the recognition process "
            "stopped or ran out of memory). Reindex to try again.",
        ),
        ErrorCode.READ_FAILED: QCoreApplication.translate(
            "errors",
            "The file may be damaged, encrypted or not a text document. Check it, then reindex.",
        ),
        ErrorCode.EMBEDDING_FAILED: QCoreApplication.translate(
            "errors",
            "The embedding model could not compute vectors. Check the provider, then reindex.",
        ),
        ErrorCode.RERANK_FAILED: QCoreApplication.translate(
            "errors", "The rerank model could not order the results."
        ),
        ErrorCode.PROVIDER_AUTH_FAILED: QCoreApplication.translate(
            "errors", "The provider refused the API key. Check the key in the provider settings."
        ),
        ErrorCode.KEYCHAIN_UNAVAILABLE: QCoreApplication.translate(
            "errors", "The system keychain could not store or read the API key."
        ),
        ErrorCode.FETCH_FAILED: QCoreApplication.translate(
            "errors", "The server could not be reached or answered with an error. Try again later."
        ),
        ErrorCode.ALL_CHILDREN_FAILED: QCoreApplication.translate(
            "errors", "None of the items inside could be indexed. Point at one to see why."
        ),
        ErrorCode.STORAGE_FULL: QCoreApplication.translate(
            "errors", "The disk that holds Trove's data is full. Free some space, then try again."
        ),
        ErrorCode.STORAGE_READ_ONLY: QCoreApplication.translate(
            "errors", "Trove's data folder cannot be written. Make it writable, then try again."
        ),
        ErrorCode.BASE_FAILED: QCoreApplication.translate(
            "errors", "This knowledge base has failed. Restore it from the settings panel."
        ),
        ErrorCode.BASE_NOT_FOUND: QCoreApplication.translate(
            "errors", "It may have been deleted meanwhile."
        ),
        ErrorCode.BASE_AMBIGUOUS: QCoreApplication.translate(
            "errors", "Choose the knowledge base by its ID instead."
        ),
        ErrorCode.ITEM_NOT_FOUND: QCoreApplication.translate(
            "errors", "It may have been deleted meanwhile."
        ),
        ErrorCode.NO_SEARCHABLE_TOKEN: QCoreApplication.translate(
            "errors",
            "Type at least one word or number; punctuation and spaces alone cannot be searched.",
        ),
        ErrorCode.ILLEGAL_TRANSITION: QCoreApplication.translate(
            "errors", "The item is being changed by another action. Try again in a moment."
        ),
        ErrorCode.INVALID_ARGUMENT: QCoreApplication.translate(
            "errors", "A value was not accepted."
        ),
        ErrorCode.MODEL_NOT_AVAILABLE: QCoreApplication.translate(
            "errors", "No configured provider offers this model. Check the model providers."
        ),
        ErrorCode.UNSAFE_PATH: QCoreApplication.translate(
            "errors", "The path leads outside the knowledge base's folder."
        ),
        ErrorCode.INDEX_CORRUPT: QCoreApplication.translate(
            "errors",
            "The index of this knowledge base is damaged. Restore rebuilds it from the base's "
            "own copies.",
        ),
        ErrorCode.CATALOG_DAMAGED: QCoreApplication.translate(
            "errors", "Trove's catalog file cannot be read."
        ),
        ErrorCode.SERVER_UNAVAILABLE: QCoreApplication.translate(
            "errors",
            "The PostgreSQL server of this knowledge base cannot be reached, or it refused "
            "the login. Check that the server is running and this computer may connect.",
        ),
        ErrorCode.ALREADY_IN_BASE: QCoreApplication.translate(
            "errors", "This source is already in the knowledge base."
        ),
        # -- portable bases --
        ErrorCode.ARCHIVE_DAMAGED: QCoreApplication.translate(
            "errors",
            "The file is cut short, changed since it was exported, or not a Trove export. "
            "Nothing was imported; export the knowledge base again.",
        ),
        ErrorCode.ARCHIVE_NEWER_FORMAT: QCoreApplication.translate(
            "errors",
            "It was exported by a newer version of Trove. Nothing was imported; update Trove, "
            "then import it again.",
        ),
        ErrorCode.ARCHIVE_UNSAFE: QCoreApplication.translate(
            "errors",
            "It holds things no Trove export holds, such as commands that would run inside "
            "its index. It may have been made to attack; nothing was imported.",
        ),
        ErrorCode.IMPORTED_SOURCE: QCoreApplication.translate(
            "errors",
            "Its source names a file, folder or page of the computer the knowledge base came "
            "from, so Trove does not read it. Add it again from this computer to keep it in "
            "sync or refresh it; reindexing uses the knowledge base's own copy.",
        ),
        ErrorCode.CANCELLED: QCoreApplication.translate("errors", "Nothing of it was kept."),
        ErrorCode.CHAT_FAILED: QCoreApplication.translate(
            "errors", "The chat model could not answer. Check the provider, then ask again."
        ),
        ErrorCode.CHAT_CONTEXT_OVERFLOW: QCoreApplication.translate(
            "errors",
            "The question and the passages found are longer than the chat model can read, "
            "even with fewer passages. Ask a shorter question or choose a larger model.",
        ),
        ErrorCode.ANSWER_INTERRUPTED: QCoreApplication.translate(
            "errors",
            "The connection to the chat model broke while it was answering. The part that "
            "arrived is kept; ask again for the rest.",
        ),
    }
    if code == ErrorCode.CHAT_RATE_LIMITED:
        seconds = int(params.get("seconds") or 0)
        if seconds:
            return QCoreApplication.translate(
                "errors",
                "The chat model's provider asks to wait %n second(s) before the next question.",
                "",
                seconds,
            )
        return QCoreApplication.translate(
            "errors",
            "The chat model's provider gets too many requests. Wait a moment, then ask again.",
        )
    found = texts.get(code)
    return (
        found
        if found is not None
        else QCoreApplication.translate("errors", "An unexpected error occurred.")
    )


def _provider_message(reason: str, params: Params) -> str:
    """A provider failure said from its reason and params; "" for an unknown reason."""
    provider = str(params.get("provider") or QCoreApplication.translate("errors", "The provider"))
    address = str(params.get("address") or provider)
    status = str(params.get("status") or "")
    if reason == ErrorReason.CONNECTION_REFUSED:
        return QCoreApplication.translate(
            "errors", "Nothing answered at {0}. Is the server running, and is the address right?"
        ).format(address)
    if reason == ErrorReason.HOST_NOT_FOUND:
        return QCoreApplication.translate(
            "errors", "The host of {0} could not be found. Check the address and the network."
        ).format(address)
    if reason == ErrorReason.CONNECTION_FAILED:
        return QCoreApplication.translate(
            "errors", "Could not connect to {0}. Check the address and the network."
        ).format(address)
    if reason == ErrorReason.TIMED_OUT:
        return QCoreApplication.translate(
            "errors", "{0} did not answer in time. Try again later."
        ).format(provider)
    if reason == ErrorReason.KEY_REJECTED:
        return QCoreApplication.translate(
            "errors", "{0} rejected the API key (HTTP {1}). Check the key."
        ).format(provider, status)
    if reason == ErrorReason.KEY_MISSING:
        return QCoreApplication.translate(
            "errors", "{0} needs an API key (HTTP {1}), and none is set."
        ).format(provider, status)
    if reason == ErrorReason.NOT_FOUND:
        return QCoreApplication.translate(
            "errors", "{0} answered HTTP 404: the model name is unknown or the base URL is wrong."
        ).format(provider)
    if reason == ErrorReason.MODEL_MISSING:
        return QCoreApplication.translate("errors", "{0} has no model “{1}”.").format(
            provider, params.get("model", "")
        )
    if reason == ErrorReason.NO_MODELS:
        return QCoreApplication.translate(
            "errors", "{0} lists no models. Type a model name first."
        ).format(provider)
    if reason == ErrorReason.HTTP_STATUS:
        return QCoreApplication.translate(
            "errors", "{0} answered with an error (HTTP {1})."
        ).format(provider, status)
    if reason == ErrorReason.NOT_JSON:
        return QCoreApplication.translate(
            "errors", "{0} gave an answer Trove cannot read. Is the base URL right?"
        ).format(provider)
    if reason == ErrorReason.MALFORMED:
        return QCoreApplication.translate("errors", "{0} answered in an unexpected format.").format(
            provider
        )
    if reason == ErrorReason.WRONG_DIMENSIONS:
        return QCoreApplication.translate(
            "errors",
            "The model “{0}” returned vectors of {1} dimensions instead of {2}. Restore the "
            "knowledge base to switch models.",
        ).format(params.get("model", ""), params.get("got", ""), params.get("expected", ""))
    if reason == ErrorReason.BAD_URL:
        return QCoreApplication.translate(
            "errors", "The base URL must start with http:// or https:// and name a host."
        )
    if reason == ErrorReason.NO_KEYCHAIN:
        return QCoreApplication.translate(
            "errors",
            "No system keychain is available to store the API key. Set the environment "
            "variable {0} to the key instead.",
        ).format(params.get("env_var", ""))
    if reason == ErrorReason.ANSWER_TIME_LIMIT:
        return QCoreApplication.translate(
            "errors",
            "The answer took longer than {0} seconds and was cut off there. The part that "
            "arrived is kept.",
        ).format(QLocale().toString(int(params.get("seconds") or 0)))
    if reason == ErrorReason.ANSWER_SIZE_LIMIT:
        return QCoreApplication.translate(
            "errors",
            "The answer grew longer than {0} characters and was cut off there. The part "
            "that arrived is kept.",
        ).format(QLocale().toString(int(params.get("chars") or 0)))
    return ""


def detail(code: str | None, english: str, params: Params | None = None) -> str:
    """The engine's own words worth showing under the translated message, else ""."""
    given = params or {}
    reason = given.get("reason")
    if isinstance(reason, str) and _model_message(str(code or ""), reason, given):
        detailed = reason in _MODEL_DETAILED_REASONS and _speaks_english()
        return english.strip() if detailed else ""
    if isinstance(reason, str) and _provider_message(reason, given):
        server = str(given.get("server") or "")
        return server if reason in _SERVER_REPLY_REASONS else ""
    if str(code or "") in _DETAILED_CODES and not (
        code == ErrorCode.MODEL_NOT_AVAILABLE and given.get("model")
    ):
        # Trove's own English (a reader's reason, a path in a sentence) only where the
        # window speaks English; elsewhere the translated message stands alone, and the
        # English stays in the log and behind "Copy error". A server's reply above is
        # quoted as it came: it is the server's words, not Trove's.
        return english.strip() if _speaks_english() else ""
    return ""


def _speaks_english() -> bool:
    # "C" is what Qt reports before any language was chosen (a bare process, tests): the
    # window's own words are then the English sources.
    return QLocale().language() in (QLocale.Language.English, QLocale.Language.C)


def explain(code: str | None, english: str, params: Params | None = None) -> str:
    """The translated message, with a "Details:" line when the engine's words add to it."""
    said = message(code, params)
    extra = detail(code, english, params)
    return f"{said}\n{details_line(extra)}" if extra else said


def details_line(text: str) -> str:
    return QCoreApplication.translate("errors", "Details: {0}").format(text)


def describe(exc: BaseException) -> tuple[str, str]:
    """(headline, translated explanation) for an exception raised by an engine call."""
    if isinstance(exc, TroveError):
        return headline(exc.code), explain(exc.code, exc.message, exc.params)
    if isinstance(exc, OSError):
        return QCoreApplication.translate("errors", "A file operation failed"), details_line(
            str(exc)
        )
    return QCoreApplication.translate("errors", "Something went wrong"), details_line(
        f"{type(exc).__name__}: {exc}"
    )


def item_error_text(code: str | None, english: str | None) -> str:
    """What a failed item's tooltip and toast say: headline, then the explanation."""
    return f"{headline(code)}\n{explain(code, english or '')}"


def skip_reason_text(reason: str) -> str:
    """Why an added source was skipped (an AddReport.skipped reason), translated."""
    same_as = getattr(reason, "same_as", None)
    if same_as:
        return QCoreApplication.translate(
            "errors", "The same content is already in this knowledge base as {0}."
        ).format(same_as)
    if getattr(reason, "code", None) == ErrorCode.ALREADY_IN_BASE:
        return message(ErrorCode.ALREADY_IN_BASE)
    return reason


def add_error_text(english: str) -> str:
    """An AddReport.errors message ("CODE: English") translated, the English as details."""
    code, _, rest = english.partition(": ")
    if code not in ErrorCode.__members__:
        return english
    return explain(code, rest)


def degradation_text(found: Degradation) -> str:
    """The tooltip of a degraded-search notice: what the search did instead, and why."""
    if found.stage is SearchStage.EMBEDDING:
        what = QCoreApplication.translate(
            "errors", "The embedding model failed, so only full-text matching was used."
        )
    elif found.not_asked:
        what = QCoreApplication.translate(
            "errors", "The rerank model was not asked, since the embedding model failed."
        )
    else:
        what = QCoreApplication.translate(
            "errors", "The rerank model failed, so the results keep their first order."
        )
    if found.not_asked:
        return f"{headline(found.code)}\n{what}"
    return f"{headline(found.code)}\n{what}\n{explain(found.code, '', found.params)}"
