"""Sign-bit codes of vectors and the Hamming pass that ranks them.

A unit vector's code keeps one bit per dimension: whether that coordinate is positive
(48 bytes for 384 dimensions, 1/32 of its float32 form). The Hamming distance between two
codes estimates the angle between the vectors, so a pass over the codes of a million
vectors finds the few hundred nearest candidates in a few milliseconds; the exact float32
vectors of those candidates are then scored. This is the "binary quantisation + rescoring"
scheme of vector databases (e.g. Weaviate's BQ, Qdrant's binary quantisation), with one
step between: the Hamming survivors are ranked again against the float query itself
(`asymmetric`), which keeps recall@10 above 0.95 at a million vectors with only a thousand
float vectors read.

Codes are held column-major (one row of 64-bit words per word position): XOR and
popcount then run over long contiguous arrays, about 6x faster in numpy than row-major.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

CodeWords = npt.NDArray[np.uint64]
FloatMatrix = npt.NDArray[np.float32]


def code_words(dimensions: int) -> int:
    """64-bit words per code (the last one zero-padded)."""
    return (dimensions + 63) // 64


def encode(vectors: FloatMatrix) -> npt.NDArray[np.uint8]:
    """Row-major code bytes, `code_words(dims) * 8` per vector (the stored form)."""
    rows, dims = vectors.shape
    width = code_words(dims) * 8
    bits = np.packbits(np.asarray(vectors) > 0, axis=1)
    if bits.shape[1] == width:
        return bits
    padded = np.zeros((rows, width), dtype=np.uint8)
    padded[:, : bits.shape[1]] = bits
    return padded


def encode_query(query: npt.NDArray[np.float32]) -> CodeWords:
    words: CodeWords = encode(query.reshape(1, -1)).view(np.uint64).reshape(-1)
    return words


def hamming(columns: CodeWords, query: CodeWords, out: npt.NDArray[np.uint16]) -> None:
    """Hamming distances of every column-major code to `query`, written into `out`."""
    n = out.shape[0]
    scratch = np.empty(n, dtype=np.uint64)
    counts = np.empty(n, dtype=np.uint8)
    for word in range(columns.shape[0]):
        np.bitwise_xor(columns[word, :n], query[word], out=scratch)
        np.bitwise_count(scratch, out=counts)
        if word == 0:
            out[:] = counts
        else:
            np.add(out, counts, out=out)


def bit_weights(query: npt.NDArray[np.float32]) -> FloatMatrix:
    """Per code byte, the sum of the query's coordinates over each of the 256 bit patterns.

    `asymmetric(codes, weights)` then scores a code against the float query itself, not
    against the query's own code: the query keeps its magnitudes, so the estimate is much
    closer to the true dot product than a Hamming distance (it ranks by q . bits).
    """
    dims = query.shape[-1]
    padded = np.zeros(code_words(dims) * 64, dtype=np.float32)
    padded[:dims] = query.reshape(-1)
    # packbits is big-endian within a byte: bit 7 of byte j is coordinate 8j.
    per_byte = padded.reshape(-1, 8)[:, ::-1]
    patterns = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little")
    weights: FloatMatrix = per_byte @ patterns.T.astype(np.float32)
    return weights


def asymmetric(code_bytes: npt.NDArray[np.uint8], weights: FloatMatrix) -> FloatMatrix:
    """q . bits for every row of code bytes (higher is nearer)."""
    positions = np.arange(code_bytes.shape[1])
    scores: FloatMatrix = weights[positions, code_bytes].sum(axis=1, dtype=np.float32)
    return scores


def nearest(distances: npt.NDArray[np.uint16], count: int) -> npt.NDArray[np.intp]:
    """Positions of (about) the `count` smallest distances, in no particular order.

    Distances are small integers, so a histogram finds the cut-off in one pass, about 4x
    faster than a partial sort. Ties at the cut-off fill the remaining places in position
    order: degenerate codes (many vectors sharing one) must not turn the pool into a scan.
    """
    if count >= distances.shape[0]:
        return np.arange(distances.shape[0])
    histogram = np.bincount(distances)
    cutoff = int(np.searchsorted(np.cumsum(histogram), count))
    below = np.flatnonzero(distances < cutoff)
    tied = np.flatnonzero(distances == cutoff)[: count - below.shape[0]]
    return np.concatenate([below, tied])
