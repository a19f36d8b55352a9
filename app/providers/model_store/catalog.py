"""The models Trove recommends beyond its built-in one, and where on the Hugging Face hub
their files are.

Every entry is an ONNX export a CPU runs (int8 where one exists) plus its `tokenizer.json`;
`download.py` fetches the files, `install.py` puts them in `$TROVE_HOME/models/<id>/` with a
manifest made from the entry. A base then names the model `local:<id>`.

This machine cannot reach huggingface.co, so repository paths and sizes were written from
what is known of those repositories, not read from them: sizes are approximate (the download
learns the real ones from the hub before it starts), and no checksum is kept here — every
file is checked against the sha256 the hub itself publishes for it (`X-Linked-Etag`).
Revisions are branch names; the download records the commit the hub resolved them to.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from app.providers.model_store.manifest import (
    MULTILINGUAL,
    ModelKind,
    ModelManifest,
    Pooling,
)

MB = 1_000_000


@dataclass(frozen=True, slots=True)
class HubFile:
    """One file of a model: its path in the repository and its name once installed."""

    path: str  # e.g. "onnx/model_quantized.onnx"
    install_as: str  # a plain name inside the model folder: "model.onnx"


@dataclass(frozen=True, slots=True)
class PublishedScore:
    """A quality figure the model's authors published (not measured by Trove)."""

    benchmark: str  # "MTEB (English, 56 tasks)", "C-MTEB", "MIRACL (18 languages)"
    metric: str  # "average", "nDCG@10", "MRR@10"
    value: float
    source: str  # where it was published


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    id: str
    kind: ModelKind
    name: str
    license: str
    languages: tuple[str, ...]
    max_tokens: int
    approx_bytes: int  # all files together; approximate (see the module's docstring)
    repo: str
    revision: str
    model_file: HubFile
    tokenizer_file: HubFile
    dimensions: int | None = None
    pooling: Pooling = Pooling.MEAN
    normalize: bool = True
    query_prefix: str = ""
    passage_prefix: str = ""
    # A licence that forbids commercial use (CC-BY-NC): the window and the CLI say so.
    non_commercial: bool = False
    quality: tuple[PublishedScore, ...] = ()
    summary: str = ""  # one English line on what the model is good for
    extra_files: tuple[HubFile, ...] = field(default_factory=tuple)

    @property
    def files(self) -> tuple[HubFile, ...]:
        return (self.model_file, self.tokenizer_file, *self.extra_files)

    def manifest(self, source: str, extra: dict[str, object] | None = None) -> ModelManifest:
        """The manifest an install of this entry carries; `source` names where it came from."""
        return ModelManifest(
            id=self.id,
            kind=self.kind,
            name=self.name,
            license=self.license,
            languages=self.languages,
            max_tokens=self.max_tokens,
            model_file=self.model_file.install_as,
            tokenizer_file=self.tokenizer_file.install_as,
            dimensions=self.dimensions,
            pooling=self.pooling,
            normalize=self.normalize,
            query_prefix=self.query_prefix,
            passage_prefix=self.passage_prefix,
            source=source,
            extra=dict(extra or {}),
        )


_MODEL = "model.onnx"
_TOKENIZER = HubFile("tokenizer.json", "tokenizer.json")

CATALOG: tuple[CatalogEntry, ...] = (
    CatalogEntry(
        id="multilingual-e5-small",
        kind=ModelKind.EMBEDDING,
        name="multilingual-e5-small (int8)",
        license="MIT",
        languages=(MULTILINGUAL,),
        max_tokens=512,
        # onnx/model_quantized.onnx ~118 MB + tokenizer.json ~17 MB
        approx_bytes=135 * MB,
        repo="Xenova/multilingual-e5-small",
        revision="main",
        model_file=HubFile("onnx/model_quantized.onnx", _MODEL),
        tokenizer_file=_TOKENIZER,
        dimensions=384,
        pooling=Pooling.MEAN,
        # e5 was trained with these prefixes; without them its vectors are worse.
        query_prefix="query: ",
        passage_prefix="passage: ",
        quality=(
            # Published on the MTEB leaderboard (the English benchmark of 56 tasks).
            PublishedScore("MTEB (English, 56 tasks)", "average", 57.87, "MTEB leaderboard"),
            # Published in the model card (intfloat/multilingual-e5-small), Mr. TyDi table.
            PublishedScore(
                "Mr. TyDi (11 languages)",
                "MRR@10",
                64.4,
                "model card, intfloat/multilingual-e5-small",
            ),
        ),
        summary="small and fast; about 100 languages",
    ),
    CatalogEntry(
        id="bge-m3",
        kind=ModelKind.EMBEDDING,
        name="BGE-M3 (int8)",
        license="MIT",
        languages=(MULTILINGUAL,),
        max_tokens=8192,
        # onnx/model_quantized.onnx ~569 MB + tokenizer.json ~17 MB
        approx_bytes=586 * MB,
        repo="Xenova/bge-m3",
        revision="main",
        model_file=HubFile("onnx/model_quantized.onnx", _MODEL),
        tokenizer_file=_TOKENIZER,
        dimensions=1024,
        pooling=Pooling.CLS,
        quality=(
            # Published in the BGE-M3 paper (Chen et al., 2024, "M3-Embedding"), Table 1:
            # dense retrieval alone, average over MIRACL's 18 languages.
            PublishedScore("MIRACL (18 languages)", "nDCG@10", 67.8, "BGE-M3 paper, Table 1"),
        ),
        summary="best quality of the list; long inputs (8,192 tokens); about 100 languages",
    ),
    CatalogEntry(
        id="bge-small-zh-v1.5",
        kind=ModelKind.EMBEDDING,
        name="bge-small-zh-v1.5 (int8)",
        license="MIT",
        languages=("zh", "en"),
        max_tokens=512,
        # onnx/model_quantized.onnx ~24 MB + tokenizer.json ~0.4 MB
        approx_bytes=25 * MB,
        repo="Xenova/bge-small-zh-v1.5",
        revision="main",
        model_file=HubFile("onnx/model_quantized.onnx", _MODEL),
        tokenizer_file=_TOKENIZER,
        dimensions=512,
        pooling=Pooling.CLS,
        # v1.5 retrieves well without BAAI's query instruction, so none is added.
        quality=(
            # Published in the FlagEmbedding README's C-MTEB table (average of 31 tasks).
            PublishedScore("C-MTEB (31 tasks)", "average", 57.82, "FlagEmbedding README"),
        ),
        summary="tiny; Chinese first, English too",
    ),
    CatalogEntry(
        id="bge-reranker-v2-m3",
        kind=ModelKind.RERANK,
        name="bge-reranker-v2-m3 (int8)",
        license="Apache-2.0",
        languages=(MULTILINGUAL,),
        max_tokens=8192,
        # onnx/model_quantized.onnx ~571 MB + tokenizer.json ~17 MB
        approx_bytes=588 * MB,
        repo="onnx-community/bge-reranker-v2-m3-ONNX",
        revision="main",
        model_file=HubFile("onnx/model_quantized.onnx", _MODEL),
        tokenizer_file=_TOKENIZER,
        pooling=Pooling.CLS,
        summary="reranker; about 100 languages",
    ),
    CatalogEntry(
        id="jina-reranker-v2-base-multilingual",
        kind=ModelKind.RERANK,
        name="jina-reranker-v2-base-multilingual (int8)",
        license="CC-BY-NC-4.0",
        non_commercial=True,
        languages=(MULTILINGUAL,),
        max_tokens=1024,
        # onnx/model_int8.onnx ~280 MB + tokenizer.json ~17 MB
        approx_bytes=297 * MB,
        repo="jinaai/jina-reranker-v2-base-multilingual",
        revision="main",
        model_file=HubFile("onnx/model_int8.onnx", _MODEL),
        tokenizer_file=_TOKENIZER,
        pooling=Pooling.CLS,
        summary="reranker; about 100 languages; non-commercial use only (CC-BY-NC-4.0)",
    ),
)


def catalog_entry(model_id: str) -> CatalogEntry | None:
    return next((entry for entry in CATALOG if entry.id == model_id), None)
