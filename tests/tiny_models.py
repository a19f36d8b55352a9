"""Tiny local model folders for tests: real ONNX graphs and WordPiece tokenizers, a few KB each.

Both graphs compute something a test can predict exactly, with nothing trained:

- the bi-encoder (`write_embedding_model`) turns each token into a one-hot vector over the
  vocabulary (so `dimensions` is the vocabulary size), zero for special and unknown tokens.
  Mean pooling makes a text's vector its bag of words: different words give orthogonal
  vectors, texts sharing words get similar ones, and `synonyms` map a word onto another's
  vector (a hit only the vectors can find). With `pooling="cls"` the graph also sums the
  sequence into its first position (as a trained CLS token summarises it), so CLS pooling
  gives the same bag of words;
- the cross-encoder (`write_rerank_model`) scores a (query, passage) pair as
  `logit = RERANK_SCALE * shared + RERANK_BIAS`, `shared` being the number of distinct
  words found in both (the tokenizer's pair template tells them apart by token type ids).

`bag_of_words(folder, text)` is the vector the bi-encoder gives `text` (no prefix added),
and `rerank_logit(folder, query, passage)` the cross-encoder's logit, computed without the
graph, for tests to compare against.

Each writer fills a folder with `model.onnx`, `tokenizer.json` and a `trove-model.json`
manifest and returns the manifest; `install_model(home, writer, ...)` writes it where Trove
looks for installed models (`$TROVE_HOME/models/<id>/`). Only the words in `words` (default
`WORDS`) are known; any other word is `[UNK]` and counts for nothing.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from app.providers.model_store.manifest import (
    ModelKind,
    ModelManifest,
    Pooling,
    model_folder,
    save_manifest,
)

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
PUNCTUATION = (".", ",", ":", ";", "?", "!", "-", "#", "'", "(", ")")
WORDS = (
    # prefixes e5-style models put in front of queries and passages
    "query",
    "passage",
    # a small garden, kitchen and library vocabulary for documents and queries
    "a",
    "an",
    "and",
    "the",
    "of",
    "in",
    "on",
    "for",
    "to",
    "is",
    "what",
    "how",
    "need",
    "needs",
    "much",
    "tomato",
    "tomatoes",
    "sun",
    "full",
    "water",
    "watering",
    "summer",
    "winter",
    "spring",
    "rose",
    "roses",
    "prune",
    "late",
    "feed",
    "compost",
    "bread",
    "sourdough",
    "starter",
    "flour",
    "patience",
    "apple",
    "apples",
    "fruit",
    "tree",
    "orchard",
    "harvest",
    "autumn",
    "soil",
    "seed",
    "seeds",
    "garden",
    "kitchen",
    "oven",
    "bake",
    "book",
    "library",
    "shelf",
    "read",
    "reading",
    "index",
    "search",
    "knowledge",
    "base",
    "model",
    "word",
    "words",
    "long",
    "text",
    "story",
    "river",
    "mountain",
    "city",
    # CJK characters (the tokenizer splits CJK text into single characters)
    "苹",
    "果",
    "知",
    "识",
    "库",
    "花",
    "园",
)

RERANK_SCALE = 2.0
RERANK_BIAS = -3.0
# ONNX IR 8 / opset 17: what every onnxruntime Trove accepts (>= 1.17) can load.
_IR_VERSION = 8
_OPSET = 17

ModelWriter = Callable[..., ModelManifest]


def vocabulary(words: Iterable[str] = WORDS) -> dict[str, int]:
    """token -> id: the special tokens first, then punctuation, then `words` (lower-cased)."""
    tokens = list(dict.fromkeys([*SPECIAL_TOKENS, *PUNCTUATION, *(w.lower() for w in words)]))
    return {token: i for i, token in enumerate(tokens)}


def write_tokenizer(path: Path, words: Iterable[str] = WORDS) -> dict[str, int]:
    """A lower-casing BERT WordPiece `tokenizer.json` over `words`; returns its vocabulary."""
    from tokenizers.implementations import BertWordPieceTokenizer

    vocab = vocabulary(words)
    BertWordPieceTokenizer(vocab, lowercase=True).save(str(path))
    return vocab


def write_embedding_model(
    folder: Path,
    *,
    model_id: str = "tiny-embed",
    words: Iterable[str] = WORDS,
    synonyms: Mapping[str, str] | None = None,
    pooling: Pooling | str = Pooling.MEAN,
    normalize: bool = True,
    query_prefix: str = "",
    passage_prefix: str = "",
    languages: Sequence[str] = ("en",),
    max_tokens: int = 128,
    token_type_ids: bool = True,
) -> ModelManifest:
    """A bi-encoder folder (see the module doc); `synonyms` maps a word to the word whose
    vector it gets; `token_type_ids=False` leaves that input out of the graph (some exports
    have none)."""
    folder.mkdir(parents=True, exist_ok=True)
    vocab = write_tokenizer(folder / "tokenizer.json", words)
    canonical = np.arange(len(vocab), dtype=np.int64)
    for word, target in (synonyms or {}).items():
        canonical[vocab[word.lower()]] = vocab[target.lower()]
    graph = _embedding_graph(
        canonical, _content_weights(vocab), Pooling(pooling) is Pooling.CLS, token_type_ids
    )
    _save(graph, folder / "model.onnx")
    manifest = ModelManifest(
        id=model_id,
        kind=ModelKind.EMBEDDING,
        name=f"Tiny test embedder ({model_id})",
        license="MIT",
        languages=tuple(languages),
        max_tokens=max_tokens,
        dimensions=len(vocab),
        pooling=Pooling(pooling),
        normalize=normalize,
        query_prefix=query_prefix,
        passage_prefix=passage_prefix,
        source="test",
    )
    save_manifest(folder, manifest)
    return manifest


def write_rerank_model(
    folder: Path,
    *,
    model_id: str = "tiny-rerank",
    words: Iterable[str] = WORDS,
    languages: Sequence[str] = ("en",),
    max_tokens: int = 128,
) -> ModelManifest:
    """A cross-encoder folder (see the module doc)."""
    folder.mkdir(parents=True, exist_ok=True)
    vocab = write_tokenizer(folder / "tokenizer.json", words)
    _save(_rerank_graph(_content_weights(vocab)), folder / "model.onnx")
    manifest = ModelManifest(
        id=model_id,
        kind=ModelKind.RERANK,
        name=f"Tiny test reranker ({model_id})",
        license="MIT",
        languages=tuple(languages),
        max_tokens=max_tokens,
        source="test",
    )
    save_manifest(folder, manifest)
    return manifest


def install_model(home: Path, writer: ModelWriter, **options: Any) -> ModelManifest:
    """`writer` (one of the two above) run into `$TROVE_HOME/models/<model_id>/`, the model
    id being `options["model_id"]` or the writer's default."""
    model_id = options.get("model_id", inspect.signature(writer).parameters["model_id"].default)
    return writer(model_folder(home, model_id), **options)


def bag_of_words(folder: Path, text: str) -> np.ndarray:
    """The L2-normalised word counts of `text` over the folder's vocabulary (synonyms not
    applied): the tiny bi-encoder's vector for a text without synonyms."""
    counts = _word_counts(folder, text)
    norm = np.linalg.norm(counts)
    return counts / norm if norm else counts


def rerank_logit(folder: Path, query: str, passage: str) -> float:
    shared = np.count_nonzero(_word_counts(folder, query) * _word_counts(folder, passage))
    return RERANK_SCALE * shared + RERANK_BIAS


def _word_counts(folder: Path, text: str) -> np.ndarray:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    size = tokenizer.get_vocab_size()
    counts = np.zeros(size, dtype=np.float32)
    skipped = {tokenizer.token_to_id(t) for t in SPECIAL_TOKENS}
    for token_id in tokenizer.encode(text, add_special_tokens=False).ids:
        if token_id not in skipped:
            counts[token_id] += 1
    return counts


def _content_weights(vocab: Mapping[str, int]) -> np.ndarray:
    """1 for a word or punctuation token, 0 for [PAD], [UNK], [CLS], [SEP], [MASK]."""
    weights = np.ones(len(vocab), dtype=np.float32)
    for token in SPECIAL_TOKENS:
        weights[vocab[token]] = 0.0
    return weights


def _int_inputs(names: Sequence[str]) -> list[onnx.ValueInfoProto]:
    return [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"]) for n in names]


def _token_weights(nodes: list[onnx.NodeProto]) -> str:
    """Nodes computing `weights` [batch, seq]: the attention mask times the content weight."""
    nodes += [
        helper.make_node("Gather", ["content", "input_ids"], ["content_w"]),
        helper.make_node("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["content_w", "mask_f"], ["weights"]),
    ]
    return "weights"


def _one_hot(nodes: list[onnx.NodeProto], ids: str, out: str) -> None:
    nodes.append(helper.make_node("OneHot", [ids, "depth", "on_off"], [out], axis=-1))


def _vocab_constants(size: int, content: np.ndarray) -> list[onnx.TensorProto]:
    return [
        numpy_helper.from_array(content, "content"),
        numpy_helper.from_array(np.array([size], dtype=np.int64), "depth"),
        numpy_helper.from_array(np.array([0.0, 1.0], dtype=np.float32), "on_off"),
        numpy_helper.from_array(np.array([-1], dtype=np.int64), "last_axis"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "seq_axis"),
    ]


def _embedding_graph(
    canonical: np.ndarray, content: np.ndarray, summary_first: bool, token_types: bool
) -> onnx.GraphProto:
    size = len(canonical)
    nodes: list[onnx.NodeProto] = [
        helper.make_node("Gather", ["canonical", "input_ids"], ["canon"])
    ]
    weights = _token_weights(nodes)
    if token_types:
        # A real BERT adds a token type embedding; a single text has type 0 throughout, so
        # this graph only checks the input is fed with zeros (any other type scales to 0).
        nodes += [
            helper.make_node("Cast", ["token_type_ids"], ["types_f"], to=TensorProto.FLOAT),
            helper.make_node("Sub", ["one", "types_f"], ["type_gate"]),
            helper.make_node("Mul", [weights, "type_gate"], ["gated"]),
        ]
        weights = "gated"
    _one_hot(nodes, "canon", "hot")
    nodes += [
        helper.make_node("Unsqueeze", [weights, "last_axis"], ["weights_3d"]),
        helper.make_node(
            "Mul", ["hot", "weights_3d"], ["tokens" if summary_first else "last_hidden_state"]
        ),
    ]
    if summary_first:
        # Every position holds the sum of itself and what follows: position 0 sums the text.
        nodes.append(
            helper.make_node(
                "CumSum", ["tokens", "seq_axis_scalar"], ["last_hidden_state"], reverse=1
            )
        )
    names = ["input_ids", "attention_mask", *(["token_type_ids"] if token_types else [])]
    constants = [
        numpy_helper.from_array(canonical, "canonical"),
        numpy_helper.from_array(np.array(1.0, dtype=np.float32), "one"),
        numpy_helper.from_array(np.array(1, dtype=np.int64), "seq_axis_scalar"),
        *_vocab_constants(size, content),
    ]
    output = helper.make_tensor_value_info(
        "last_hidden_state", TensorProto.FLOAT, ["batch", "seq", size]
    )
    return helper.make_graph(nodes, "tiny_bi_encoder", _int_inputs(names), [output], constants)


def _rerank_graph(content: np.ndarray) -> onnx.GraphProto:
    size = len(content)
    nodes: list[onnx.NodeProto] = []
    weights = _token_weights(nodes)
    _one_hot(nodes, "input_ids", "hot")
    nodes += [
        helper.make_node("Cast", ["token_type_ids"], ["second"], to=TensorProto.FLOAT),
        helper.make_node("Sub", ["one", "second"], ["first"]),
    ]
    for side in ("first", "second"):
        # Which words the side has: token counts over the vocabulary, clipped at 1.
        nodes += [
            helper.make_node("Mul", [weights, side], [f"{side}_w"]),
            helper.make_node("Unsqueeze", [f"{side}_w", "last_axis"], [f"{side}_w3"]),
            helper.make_node("Mul", ["hot", f"{side}_w3"], [f"{side}_hot"]),
            helper.make_node(
                "ReduceSum", [f"{side}_hot", "seq_axis"], [f"{side}_counts"], keepdims=0
            ),
            helper.make_node("Min", [f"{side}_counts", "one"], [f"{side}_words"]),
        ]
    nodes += [
        helper.make_node("Mul", ["first_words", "second_words"], ["both"]),
        helper.make_node("ReduceSum", ["both", "last_axis"], ["shared"], keepdims=1),
        helper.make_node("MatMul", ["shared", "scale"], ["scaled"]),
        helper.make_node("Add", ["scaled", "bias"], ["logits"]),
    ]
    constants = [
        numpy_helper.from_array(np.array(1.0, dtype=np.float32), "one"),
        numpy_helper.from_array(np.array([[RERANK_SCALE]], dtype=np.float32), "scale"),
        numpy_helper.from_array(np.array([RERANK_BIAS], dtype=np.float32), "bias"),
        *_vocab_constants(size, content),
    ]
    inputs = _int_inputs(["input_ids", "attention_mask", "token_type_ids"])
    output = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])
    return helper.make_graph(nodes, "tiny_cross_encoder", inputs, [output], constants)


def _save(graph: onnx.GraphProto, path: Path) -> None:
    # The writers list every constant they may need; keep only the ones the nodes read.
    used = {name for node in graph.node for name in node.input}
    kept = [c for c in graph.initializer if c.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", _OPSET)], producer_name="trove-tests"
    )
    model.ir_version = _IR_VERSION
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, str(path))
