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
        """The page's text, one recognised line per line, top to bottom."""
        pixels = np.asarray(image.convert("RGB"))
        result = self._engine(pixels)
        texts = getattr(result, "txts", None) or ()
        return "\n".join(str(t).strip() for t in texts if str(t).strip())
