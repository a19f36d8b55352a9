"""Coloured tags with the timings and hit counts of the last search (DESIGN.md 6.8)."""

from __future__ import annotations

from PySide6.QtCore import QLocale
from PySide6.QtWidgets import QHBoxLayout, QLabel, QWidget

from app.knowledge.types import (
    Degradation,
    MultiSearchResponse,
    SearchMode,
    SearchResponse,
    SearchStage,
)
from app.ui.errors import degradation_text

# (background, foreground) per tag; light tints that stay legible in dark themes too.
_COLOURS = {
    "Mode": ("#eceff1", "#263238"),
    # A provider stage that failed: amber, to be seen before any timing.
    "DegradedEmbedding": ("#fff8e1", "#8a4b00"),
    "DegradedRerank": ("#fff8e1", "#8a4b00"),
    "Embedding": ("#ede7f6", "#4527a0"),
    "Vector": ("#e3f2fd", "#0d47a1"),
    # Vectors still being computed: the vector list covers only part of the base.
    "Coverage": ("#e3f2fd", "#0d47a1"),
    "Bm25": ("#e8f5e9", "#1b5e20"),
    "Fusion": ("#fff3e0", "#e65100"),
    "Rerank": ("#fce4ec", "#880e4f"),
    "Total": ("#e0e0e0", "#212121"),
}


def _ms(value: float) -> str:
    return QLocale().toString(value, "f", 1)


class DebugStrip(QWidget):
    """One tag per search stage; a stage that did not run has no tag."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("searchDebugStrip")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        self.tags: dict[str, QLabel] = {}
        for name, (background, foreground) in _COLOURS.items():
            tag = QLabel(self)
            tag.setObjectName(f"searchTag{name}")
            tag.setStyleSheet(
                f"QLabel {{ background-color: {background}; color: {foreground}; "
                "border-radius: 7px; padding: 1px 7px; }"
            )
            tag.hide()
            layout.addWidget(tag)
            self.tags[name] = tag
        layout.addStretch(1)
        self._set_tooltips()

    def _set_tooltips(self) -> None:
        self.tags["Mode"].setToolTip(self.tr("How the knowledge base was searched"))
        self.tags["Embedding"].setToolTip(self.tr("Time to turn the query into a vector"))
        self.tags["Vector"].setToolTip(self.tr("Vector search: time and candidates found"))
        self.tags["Coverage"].setToolTip(
            self.tr(
                "The vectors of this knowledge base are still being computed; the documents "
                "without them are found by their words meanwhile"
            )
        )
        self.tags["Bm25"].setToolTip(self.tr("Full-text (BM25) search: time and candidates found"))
        self.tags["Fusion"].setToolTip(self.tr("Time to merge the vector and full-text lists"))
        self.tags["Rerank"].setToolTip(self.tr("Time the rerank model took"))
        self.tags["Total"].setToolTip(self.tr("Time of the whole search"))

    def clear(self) -> None:
        for tag in self.tags.values():
            tag.hide()

    def show_response(self, response: SearchResponse) -> None:
        m = response.metrics
        vectors = response.mode in (SearchMode.VECTOR, SearchMode.HYBRID)
        bm25 = response.mode in (SearchMode.BM25, SearchMode.HYBRID)
        # A stage ran when the mode includes it and it took time (an empty base stops early).
        self._show("Mode", True, self._mode_text(response.mode))
        self._show(
            "Embedding",
            vectors and m.embedding_ms > 0,
            self.tr("Embedding {0} ms").format(_ms(m.embedding_ms)),
        )
        self._show(
            "Vector",
            vectors and m.vector_search_ms > 0,
            self.tr("Vector {0} ms, %n hit(s)", "", m.vector_hit_count).format(
                _ms(m.vector_search_ms)
            ),
        )
        coverage = m.vector_coverage
        self._show(
            "Coverage",
            vectors and coverage is not None and coverage < 1.0,
            self.tr("Vectors for {0}% of chunks").format(min(99, int(100 * (coverage or 0.0)))),
        )
        self._show(
            "Bm25",
            bm25 and m.bm25_search_ms > 0,
            self.tr("BM25 {0} ms, %n hit(s)", "", m.bm25_hit_count).format(_ms(m.bm25_search_ms)),
        )
        self._show(
            "Fusion",
            response.mode is SearchMode.HYBRID and m.fusion_ms > 0,
            self.tr("Fusion {0} ms").format(_ms(m.fusion_ms)),
        )
        self._show("Rerank", response.reranked, self.tr("Rerank {0} ms").format(_ms(m.rerank_ms)))
        self._show("Total", True, self.tr("Total {0} ms").format(_ms(m.total_ms)))
        self._show_degraded(response.degraded)

    def show_many(self, response: MultiSearchResponse) -> None:
        """A search of several bases: how many were searched and the whole time; each
        base's stages ran on their own, so their timings are not added up into tags."""
        self.clear()
        self._show(
            "Mode",
            True,
            self.tr("%n knowledge base(s)", "", len(response.searched)),
        )
        self._show("Total", True, self.tr("Total {0} ms").format(_ms(response.total_ms)))
        self._show_degraded([d for _, d in response.degraded])

    def _show_degraded(self, degraded: list[Degradation]) -> None:
        """One notice per failed provider stage; its tooltip holds the error itself."""
        by_stage = {d.stage: d for d in degraded}
        notices = {
            "DegradedEmbedding": (
                SearchStage.EMBEDDING,
                self.tr("Embedding model unavailable — keyword results only"),
            ),
            "DegradedRerank": (
                SearchStage.RERANK,
                self.tr("Reranker unavailable — results not reranked"),
            ),
        }
        for name, (stage, text) in notices.items():
            found = by_stage.get(stage)
            self.tags[name].setToolTip(degradation_text(found) if found is not None else "")
            self._show(name, found is not None, text)

    def _mode_text(self, mode: SearchMode) -> str:
        if mode is SearchMode.HYBRID:
            return self.tr("Hybrid")
        if mode is SearchMode.VECTOR:
            return self.tr("Vector only")
        return self.tr("Full text")

    def _show(self, name: str, visible: bool, text: str) -> None:
        tag = self.tags[name]
        tag.setText(text)
        tag.setVisible(visible)
