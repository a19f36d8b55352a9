"""What the window says about a local model, in the person's language: its kind, languages,
size, licence, state and summary. The engine describes models in English (the CLI's words);
the Models dialog and the model pickers say the same things through these functions."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QCoreApplication

from app.knowledge.service import ModelKind, ModelListing, ModelState
from app.knowledge.types import MULTILINGUAL, LanguageSource

KB = 1_000
MB = 1_000_000
GB = 1_000_000_000


def size_text(size: float) -> str:
    """Decimal units as the catalog and the README give sizes: "980 B", "12 KB", "135 MB",
    "1.2 GB"."""
    value = max(0.0, float(size))
    if value < KB:
        return QCoreApplication.translate("ModelTexts", "{0} B").format(int(value))
    if value < MB:
        return QCoreApplication.translate("ModelTexts", "{0} KB").format(_digits(value / KB))
    if value < GB:
        return QCoreApplication.translate("ModelTexts", "{0} MB").format(_digits(value / MB))
    return QCoreApplication.translate("ModelTexts", "{0} GB").format(_digits(value / GB))


def rate_text(bytes_per_second: float) -> str:
    return QCoreApplication.translate("ModelTexts", "{0}/s").format(size_text(bytes_per_second))


def _digits(value: float) -> str:
    """One decimal under 10 (never "1.0"), whole numbers above."""
    if value < 10:
        return f"{value:.1f}".removesuffix(".0")
    return str(round(value))


def kind_text(kind: str) -> str:
    if kind == ModelKind.RERANK:
        return QCoreApplication.translate("ModelTexts", "Rerank")
    return QCoreApplication.translate("ModelTexts", "Embedding")


def language_name(code: str) -> str:
    """A language code as the person's language names it; unknown codes as they are."""
    names = {
        MULTILINGUAL: QCoreApplication.translate("ModelTexts", "many languages"),
        "en": QCoreApplication.translate("ModelTexts", "English"),
        "zh": QCoreApplication.translate("ModelTexts", "Chinese"),
        "ja": QCoreApplication.translate("ModelTexts", "Japanese"),
        "ko": QCoreApplication.translate("ModelTexts", "Korean"),
        "de": QCoreApplication.translate("ModelTexts", "German"),
        "fr": QCoreApplication.translate("ModelTexts", "French"),
        "es": QCoreApplication.translate("ModelTexts", "Spanish"),
        "it": QCoreApplication.translate("ModelTexts", "Italian"),
        "pt": QCoreApplication.translate("ModelTexts", "Portuguese"),
        "ru": QCoreApplication.translate("ModelTexts", "Russian"),
        "ar": QCoreApplication.translate("ModelTexts", "Arabic"),
        "hi": QCoreApplication.translate("ModelTexts", "Hindi"),
        "nl": QCoreApplication.translate("ModelTexts", "Dutch"),
        "pl": QCoreApplication.translate("ModelTexts", "Polish"),
        "tr": QCoreApplication.translate("ModelTexts", "Turkish"),
        "vi": QCoreApplication.translate("ModelTexts", "Vietnamese"),
        "th": QCoreApplication.translate("ModelTexts", "Thai"),
        "id": QCoreApplication.translate("ModelTexts", "Indonesian"),
        "uk": QCoreApplication.translate("ModelTexts", "Ukrainian"),
        "sv": QCoreApplication.translate("ModelTexts", "Swedish"),
    }
    return names.get(code, code)


def languages_text(languages: Sequence[str] | None) -> str:
    """ "English", "Chinese, English", "Many languages"; "Not known" for none."""
    if not languages:
        return QCoreApplication.translate("ModelTexts", "Not known")
    if MULTILINGUAL in languages:
        return QCoreApplication.translate("ModelTexts", "Many languages")
    separator = QCoreApplication.translate("ModelTexts", ", ")
    return separator.join(language_name(code) for code in languages)


def language_source_text(source: str) -> str:
    """Where Trove's knowledge of a model's languages comes from."""
    texts: dict[str, str] = {
        LanguageSource.OVERRIDE: QCoreApplication.translate("ModelTexts", "your setting"),
        LanguageSource.INSTALLED: QCoreApplication.translate("ModelTexts", "the model's manifest"),
        LanguageSource.TABLE: QCoreApplication.translate(
            "ModelTexts", "Trove's table of known models"
        ),
    }
    return texts.get(source, QCoreApplication.translate("ModelTexts", "nothing Trove knows"))


def licence_text(listing: ModelListing) -> str:
    if listing.non_commercial:
        return QCoreApplication.translate("ModelTexts", "{0} (non-commercial use only)").format(
            listing.license
        )
    if listing.license == "unknown":
        return QCoreApplication.translate("ModelTexts", "Not known")
    return listing.license


def display_name(listing: ModelListing) -> str:
    """The model's name; the built-in one by its id, said to be built in."""
    if listing.state is ModelState.BUILT_IN:
        return QCoreApplication.translate("ModelTexts", "{0} (built in)").format(listing.id)
    return listing.name


def size_of(listing: ModelListing) -> str:
    """Its size on the disk once installed; the catalog's approximate download before."""
    if listing.size_on_disk is not None:
        return size_text(listing.size_on_disk)
    if listing.approx_bytes:
        return QCoreApplication.translate("ModelTexts", "about {0}").format(
            size_text(listing.approx_bytes)
        )
    return ""


def download_left(listing: ModelListing) -> int:
    """Roughly what a download of the model still fetches (the catalog's size less a kept
    part)."""
    return max(0, (listing.approx_bytes or 0) - listing.partial_bytes)


def state_text(listing: ModelListing) -> str:
    """The state of a model that is not being downloaded."""
    if listing.state is ModelState.BUILT_IN:
        return (
            QCoreApplication.translate("ModelTexts", "Built in")
            if listing.problem is None
            else QCoreApplication.translate("ModelTexts", "Needs the local extra")
        )
    if listing.state is ModelState.INSTALLED:
        return QCoreApplication.translate("ModelTexts", "Installed")
    if listing.state is ModelState.DAMAGED:
        return QCoreApplication.translate("ModelTexts", "Damaged")
    if listing.partial_bytes:
        return QCoreApplication.translate("ModelTexts", "Paused, {0} kept").format(
            size_text(listing.partial_bytes)
        )
    return QCoreApplication.translate("ModelTexts", "Not downloaded")


def problem_text(listing: ModelListing) -> str:
    """Why a model cannot be used, said in the person's language ("" when it can)."""
    if listing.problem is None:
        return ""
    if listing.state is ModelState.BUILT_IN:
        return QCoreApplication.translate(
            "ModelTexts",
            "Its runtime is not installed. Install Trove with the local extra "
            "(pip install 'trove[local]') to use it.",
        )
    return QCoreApplication.translate(
        "ModelTexts",
        "This model's folder is damaged or incomplete. Remove it, then download or import it again.",
    )


def summary_text(listing: ModelListing) -> str:
    """The catalog's one-line summary in the person's language (the English one when this
    Trove has no translation of it)."""
    if listing.state is ModelState.BUILT_IN:
        return QCoreApplication.translate("ModelTexts", "ships with Trove; English")
    known = {
        "small and fast; about 100 languages": QCoreApplication.translate(
            "ModelTexts", "small and fast; about 100 languages"
        ),
        "best quality of the list; long inputs (8,192 tokens); about 100 languages": QCoreApplication.translate(
            "ModelTexts",
            "best quality of the list; long inputs (8,192 tokens); about 100 languages",
        ),
        "tiny; Chinese first, English too": QCoreApplication.translate(
            "ModelTexts", "tiny; Chinese first, English too"
        ),
        "reranker; about 100 languages": QCoreApplication.translate(
            "ModelTexts", "reranker; about 100 languages"
        ),
        "reranker; about 100 languages; non-commercial use only (CC-BY-NC-4.0)": QCoreApplication.translate(
            "ModelTexts", "reranker; about 100 languages; non-commercial use only (CC-BY-NC-4.0)"
        ),
    }
    if listing.summary:
        return known.get(listing.summary, listing.summary)
    if listing.source == "import":
        return QCoreApplication.translate("ModelTexts", "imported from a folder")
    return ""


def quality_text(listing: ModelListing) -> str:
    """Published quality figures, one a line: "MTEB (English, 56 tasks) average 57.87"."""
    return "\n".join(
        f"{score.benchmark} {score.metric} {score.value:g} ({score.source})"
        for score in listing.quality
    )


def runs_on_text(listing: ModelListing) -> str:
    """Where the model runs, and what was measured ("" when it is not installed)."""
    runs_on = listing.runs_on
    if runs_on is None:
        return ""
    placement = runs_on.placement
    if not placement.on_cpu:
        speedup = f"{placement.speedup:.1f}" if placement.speedup else "?"
        return QCoreApplication.translate(
            "ModelTexts", "Runs on {0}, measured {1}× as fast as the CPU"
        ).format(placement.device, speedup)
    # Two strings, not %n: lupdate reads QCoreApplication.translate's count as no plural.
    if placement.threads == 1:
        cpu = QCoreApplication.translate("ModelTexts", "Runs on the CPU (1 thread)")
    else:
        cpu = QCoreApplication.translate("ModelTexts", "Runs on the CPU ({0} threads)").format(
            placement.threads
        )
    tried = placement.tried_device
    if tried is not None and placement.failed is not None:
        return QCoreApplication.translate("ModelTexts", "{0}; {1} could not run it").format(
            cpu, tried
        )
    if tried is not None and placement.speedup is not None:
        return QCoreApplication.translate(
            "ModelTexts", "{0}; {1} measured {2}× as fast, so not used"
        ).format(cpu, tried, f"{placement.speedup:.1f}")
    pending = runs_on.pending_device
    if pending is not None:
        return QCoreApplication.translate(
            "ModelTexts", "{0}; {1} is measured when the model is first used"
        ).format(cpu, pending)
    return cpu


def used_by_text(listing: ModelListing) -> str:
    if not listing.used_by:
        return ""
    quoted = QCoreApplication.translate("ModelTexts", ", ").join(
        f"“{name}”" for name in listing.used_by
    )
    return QCoreApplication.translate("ModelTexts", "Used by {0}").format(quoted)
