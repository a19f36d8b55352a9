"""Whether a base recognises text in scans and pictures, and checks of its OCR settings."""

from __future__ import annotations

from functools import cache
from importlib.util import find_spec

from app.knowledge.types import OCR_LANGUAGES, ErrorCode, OcrSettings, TroveError

MAX_PAGES_LIMIT = 10_000


@cache
def ocr_installed() -> bool:
    """True when the `ocr` extra (rapidocr, pypdfium2, Pillow) is importable."""
    return all(find_spec(name) is not None for name in ("rapidocr", "pypdfium2", "PIL"))


def ocr_on(settings: OcrSettings) -> bool:
    """Whether the base asks for text recognition (on by default when it is installed)."""
    return ocr_installed() if settings.enabled is None else settings.enabled


def checked_ocr_settings(settings: OcrSettings) -> OcrSettings:
    """The settings with languages normalised; TroveError(INVALID_ARGUMENT) when unusable."""
    languages = tuple(dict.fromkeys(code.strip().lower() for code in settings.languages if code))
    unknown = [code for code in languages if code not in OCR_LANGUAGES]
    if not languages or unknown:
        raise TroveError(
            ErrorCode.INVALID_ARGUMENT,
            f"OCR languages must be some of {', '.join(OCR_LANGUAGES)} (the bundled models "
            f"read Chinese and English); got {', '.join(unknown) or 'none'}",
            {"languages": ", ".join(OCR_LANGUAGES)},
        )
    if not 1 <= settings.max_pages <= MAX_PAGES_LIMIT:
        raise TroveError(
            ErrorCode.INVALID_ARGUMENT,
            f"the most pages recognised per document must be between 1 and {MAX_PAGES_LIMIT}",
        )
    return OcrSettings(settings.enabled, languages, settings.max_pages)
