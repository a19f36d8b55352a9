"""The durable form of a base's vectors: float32 rows plus blocks of their sign-bit codes.

Two tables in the base's index file, written in the caller's write transaction:

- `vectors (id, embedding, block)`: one float32 vector per chunk (id = chunk id) and the
  block that holds its code. Rescoring reads a few hundred of these by primary key.
- `vector_blocks (block, version, ids, codes)`: up to BLOCK_ROWS chunk ids (int64) and
  their codes per row. A searching process keeps every block's codes in memory and, when
  the base's vector epoch moved, reads again only the blocks whose version changed; so
  another process's append costs a reader one block, not the whole index.

Appends fill the last block and open new ones; deletes rewrite only the blocks that held
the deleted vectors, and a block left less than a quarter full moves its rows to the end,
so deleted vectors are reclaimed without rewriting the index.

Everything here is derived from `vectors` except the floats themselves: `rebuild` writes
the blocks again from the float rows (migration from sqlite-vec, `trove doctor`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import apsw
import numpy as np
import numpy.typing as npt

from app.knowledge.pipeline.store.vector_codes import FloatMatrix, code_words, encode

# Rows per block. A writer rewrites the tail block on every append, so blocks are kept
# small (64 KB at 384 dimensions); a reader lists about a thousand of them at 1M vectors.
BLOCK_ROWS = 1024
_SPARSE = BLOCK_ROWS // 4
_BATCH = 500

SCHEMA = """
    CREATE TABLE vectors (
        id INTEGER PRIMARY KEY,
        embedding BLOB NOT NULL,
        block INTEGER
    );
    CREATE INDEX vectors_block ON vectors(block);
    CREATE TABLE vector_blocks (
        block INTEGER PRIMARY KEY,
        version INTEGER NOT NULL,
        ids BLOB NOT NULL,
        codes BLOB NOT NULL
    );
"""


@dataclass(slots=True)
class Block:
    number: int
    ids: npt.NDArray[np.int64]
    codes: npt.NDArray[np.uint8]  # rows x code bytes


def create(conn: apsw.Connection) -> None:
    conn.execute(SCHEMA)


def drop(conn: apsw.Connection) -> None:
    conn.execute("DROP TABLE IF EXISTS vector_blocks")
    conn.execute("DROP TABLE IF EXISTS vectors")


def _batches(values: list[int]) -> Iterator[list[int]]:
    for start in range(0, len(values), _BATCH):
        yield values[start : start + _BATCH]


def _code_bytes(dimensions: int) -> int:
    return code_words(dimensions) * 8


def _read_block(conn: apsw.Connection, number: int, dimensions: int) -> Block | None:
    row = conn.execute("SELECT ids, codes FROM vector_blocks WHERE block = ?", (number,)).fetchone()
    if row is None:
        return None
    return _block(number, row[0], row[1], dimensions)


def _block(number: int, ids: bytes, codes: bytes, dimensions: int) -> Block:
    id_array = np.frombuffer(ids, dtype=np.int64)
    code_array = np.frombuffer(codes, dtype=np.uint8).reshape(
        len(id_array), _code_bytes(dimensions)
    )
    return Block(number, id_array, code_array)


def _write_block(conn: apsw.Connection, block: Block, version: int) -> None:
    if len(block.ids) == 0:
        conn.execute("DELETE FROM vector_blocks WHERE block = ?", (block.number,))
        return
    conn.execute(
        "INSERT OR REPLACE INTO vector_blocks (block, version, ids, codes) VALUES (?,?,?,?)",
        (
            block.number,
            version,
            np.ascontiguousarray(block.ids, dtype=np.int64).tobytes(),
            np.ascontiguousarray(block.codes, dtype=np.uint8).tobytes(),
        ),
    )


def _tail(conn: apsw.Connection) -> int | None:
    row = conn.execute("SELECT max(block) FROM vector_blocks").fetchone()
    return None if row is None or row[0] is None else int(row[0])


def add(
    conn: apsw.Connection, ids: list[int], vectors: FloatMatrix, dimensions: int, version: int
) -> None:
    """Store `vectors` (one per chunk id, not yet stored) and append their codes."""
    if not ids:
        return
    matrix = np.ascontiguousarray(vectors, dtype=np.float32).reshape(len(ids), dimensions)
    placed = _append_codes(
        conn, np.asarray(ids, dtype=np.int64), encode(matrix), dimensions, version
    )
    conn.executemany(
        "INSERT INTO vectors (id, embedding, block) VALUES (?, ?, ?)",
        (
            (chunk_id, matrix[row].tobytes(), block)
            for row, (chunk_id, block) in enumerate(zip(ids, placed, strict=True))
        ),
    )


def _append_codes(
    conn: apsw.Connection,
    ids: npt.NDArray[np.int64],
    codes: npt.NDArray[np.uint8],
    dimensions: int,
    version: int,
) -> list[int]:
    """Append to the tail block, opening new blocks as they fill; the block of each id."""
    placed: list[int] = []
    tail_number = _tail(conn)
    tail = _read_block(conn, tail_number, dimensions) if tail_number is not None else None
    done = 0
    while done < len(ids):
        if tail is None or len(tail.ids) >= BLOCK_ROWS:
            number = 0 if tail is None else tail.number + 1
            tail = Block(
                number, np.empty(0, dtype=np.int64), np.empty((0, codes.shape[1]), np.uint8)
            )
        take = min(BLOCK_ROWS - len(tail.ids), len(ids) - done)
        tail = Block(
            tail.number,
            np.concatenate([tail.ids, ids[done : done + take]]),
            np.concatenate([tail.codes, codes[done : done + take]]),
        )
        _write_block(conn, tail, version)
        placed.extend([tail.number] * take)
        done += take
    return placed


def remove(conn: apsw.Connection, ids: Iterable[int], dimensions: int, version: int) -> int:
    """Delete the vectors of these chunk ids and their codes; returns vectors deleted."""
    wanted = sorted(set(ids))
    by_block: dict[int, list[int]] = defaultdict(list)
    removed = 0
    for part in _batches(wanted):
        marks = ",".join("?" * len(part))
        for chunk_id, block in conn.execute(
            f"SELECT id, block FROM vectors WHERE id IN ({marks})", part
        ):
            removed += 1
            if block is not None:
                by_block[int(block)].append(int(chunk_id))
        conn.execute(f"DELETE FROM vectors WHERE id IN ({marks})", part)
    tail = _tail(conn)
    for number, gone in sorted(by_block.items()):
        block = _read_block(conn, number, dimensions)
        if block is None:
            continue
        keep = ~np.isin(block.ids, np.asarray(gone, dtype=np.int64))
        block = Block(number, block.ids[keep], block.codes[keep])
        if 0 < len(block.ids) < _SPARSE and number != tail:
            _move_to_tail(conn, block, dimensions, version)
        else:
            _write_block(conn, block, version)
    return removed


def _move_to_tail(conn: apsw.Connection, block: Block, dimensions: int, version: int) -> None:
    """Fold a sparse block into the tail, so reclaimed space does not stay reserved."""
    conn.execute("DELETE FROM vector_blocks WHERE block = ?", (block.number,))
    placed = _append_codes(conn, block.ids, block.codes, dimensions, version)
    conn.executemany(
        "UPDATE vectors SET block = ? WHERE id = ?",
        ((number, int(chunk_id)) for number, chunk_id in zip(placed, block.ids, strict=True)),
    )


def rebuild(conn: apsw.Connection, dimensions: int, version: int) -> int:
    """Write every block again from the float rows; returns the vectors placed.

    Reads the rows a block at a time (by id range), so a million vectors never sit in
    memory at once.
    """
    conn.execute("DELETE FROM vector_blocks")
    placed = number = 0
    after = -1
    while True:
        rows: list[tuple[int, bytes]] = list(
            conn.execute(
                "SELECT id, embedding FROM vectors WHERE id > ? ORDER BY id LIMIT ?",
                (after, BLOCK_ROWS),
            )
        )
        if not rows:
            return placed
        ids = [int(r[0]) for r in rows]
        codes = encode(_matrix([r[1] for r in rows], dimensions))
        _write_block(conn, Block(number, np.asarray(ids, dtype=np.int64), codes), version)
        conn.executemany("UPDATE vectors SET block = ? WHERE id = ?", ((number, i) for i in ids))
        placed += len(ids)
        number += 1
        after = ids[-1]


def _matrix(blobs: list[bytes], dimensions: int) -> FloatMatrix:
    matrix: FloatMatrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(
        len(blobs), dimensions
    )
    return matrix


def mismatches(conn: apsw.Connection, dimensions: int) -> list[str]:
    """How the blocks disagree with the float rows ([] when they agree)."""
    in_blocks: dict[int, int] = {}
    duplicated = 0
    for number, ids, codes in conn.execute("SELECT block, ids, codes FROM vector_blocks"):
        block = _block(int(number), ids, codes, dimensions)
        for chunk_id in block.ids.tolist():
            if chunk_id in in_blocks:
                duplicated += 1
            in_blocks[chunk_id] = block.number
    stored = {
        int(i): (None if b is None else int(b))
        for i, b in conn.execute("SELECT id, block FROM vectors")
    }
    problems: list[str] = []
    missing = sum(1 for i in stored if i not in in_blocks)
    extra = sum(1 for i in in_blocks if i not in stored)
    misplaced = sum(1 for i, b in stored.items() if i in in_blocks and in_blocks[i] != b)
    if missing:
        problems.append(f"{missing} vector(s) have no code in any block")
    if extra:
        problems.append(f"{extra} code(s) in blocks belong to no vector")
    if misplaced:
        problems.append(f"{misplaced} vector(s) name the wrong block")
    if duplicated:
        problems.append(f"{duplicated} code(s) appear in more than one block")
    return problems


def read_blocks(
    conn: apsw.Connection, numbers: list[int], dimensions: int
) -> Iterator[tuple[Block, int]]:
    """Blocks by number, with their versions (a reader's refresh)."""
    for part in _batches(numbers):
        marks = ",".join("?" * len(part))
        yield from _versioned(
            conn.execute(
                f"SELECT block, version, ids, codes FROM vector_blocks WHERE block IN ({marks})",
                part,
            ),
            dimensions,
        )


def all_blocks(conn: apsw.Connection, dimensions: int) -> Iterator[tuple[Block, int]]:
    """Every block with its version, in one scan (a reader's first load)."""
    yield from _versioned(
        conn.execute("SELECT block, version, ids, codes FROM vector_blocks"), dimensions
    )


def _versioned(rows: Iterable[Any], dimensions: int) -> Iterator[tuple[Block, int]]:
    for number, version, ids, codes in rows:
        yield _block(int(number), ids, codes, dimensions), int(version)


def block_versions(conn: apsw.Connection) -> dict[int, int]:
    return {int(b): int(v) for b, v in conn.execute("SELECT block, version FROM vector_blocks")}


def floats(conn: apsw.Connection, ids: list[int], dimensions: int) -> dict[int, bytes]:
    """Stored float32 bytes of these chunk ids (those still stored)."""
    found: dict[int, bytes] = {}
    for part in _batches(sorted(ids)):
        marks = ",".join("?" * len(part))
        for chunk_id, blob in conn.execute(
            f"SELECT id, embedding FROM vectors WHERE id IN ({marks})", part
        ):
            found[int(chunk_id)] = blob
    return found
