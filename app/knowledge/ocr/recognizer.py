"""Text in a page image, read with rapidocr (PP-OCR detection, orientation and recognition
models, shipped inside its wheel: nothing is downloaded)."""

from __future__ import annotations

from typing import Any

import numpy as np

# Text is found on the page scaled so that its longer side is at most this many pixels
# (PDF pages are rendered at this size, see page_images.py): an A4 page at 137 dpi, where
# 10-point text is 19 px high, enough for PP-OCR. Detection time grows with the area;
# 1,600 px takes about half of 2,000 px's.
PAGE_LONG_SIDE_PX = 1600


# A page whose lines are read with less mean confidence than this may be upside down.
UPSIDE_DOWN_SUSPECT = 0.96


class Recognizer:
    """One loaded set of models; `read` takes a page image and gives its lines of text."""

    def __init__(self, languages: tuple[str, ...]) -> None:
        from rapidocr import RapidOCR

        # The Chinese PP-OCR models read Chinese and English (the languages Trove allows);
        # the orientation classifier turns upside-down lines back.
        self._languages = languages
        self._engine = RapidOCR(
            params={
                "Global.log_level": "error",
                "Global.use_cls": True,
                "Global.max_side_len": PAGE_LONG_SIDE_PX,
                "Det.limit_type": "max",
                "Det.limit_side_len": PAGE_LONG_SIDE_PX,
                # One thread: the worker runs beside the window and the document readers.
                "EngineConfig.onnxruntime.intra_op_num_threads": 1,
                "EngineConfig.onnxruntime.inter_op_num_threads": 1,
            }
        )

    def read(self, image: Any) -> str:
        """The page's text, one recognised line per line, top to bottom.

        The orientation model turns single lines, but an upside-down page still comes out
        in reverse line order with some lines misread; such a page reads with a lower mean
        confidence, so it is read again turned over and the more confident reading wins
        (weighted by line length, measured: an upright page 0.99 vs 0.96 turned over, an
        upside-down one 0.93 vs 0.99)."""
        rgb = image.convert("RGB")
        lines, confidence = self._lines(rgb)
        if lines and confidence < UPSIDE_DOWN_SUSPECT:
            turned, turned_confidence = self._lines(rgb.rotate(180))
            if turned_confidence > confidence:
                lines = turned
        return "\n".join(lines)

    def _lines(self, rgb: Any) -> tuple[list[str], float]:
        result = self._engine(np.asarray(rgb))
        texts = [str(t).strip() for t in (getattr(result, "txts", None) or ())]
        scores = [float(s) for s in (getattr(result, "scores", None) or ())]
        kept = [(t, s) for t, s in zip(texts, scores, strict=False) if t]
        weight = sum(len(t) for t, _ in kept)
        confidence = sum(s * len(t) for t, s in kept) / weight if weight else 0.0
        return [t for t, _ in kept], confidence
