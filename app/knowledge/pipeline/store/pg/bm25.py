"""BM25 over the postings, the same numbers as FTS5's `bm25(chunks_fts, 1.0, 2.0)`.

FTS5 (fts5_aux.c) scores a row, for the phrases p of the query, as

    sum_p idf(p) * f(p) * (k1 + 1) / (f(p) + k1 * (1 - b + b * D / avgdl))

with k1 = 1.2, b = 0.75; f(p) = the sum over columns of weight * occurrences of p (body
1.0, title 2.0); D = the row's tokens in all columns (unweighted); avgdl = all tokens /
all rows; idf(p) = ln((N - n(p) + 0.5) / (n(p) + 0.5)), 1e-6 where that is <= 0, N the
rows and n(p) the rows p occurs in. A prefix phrase occurs wherever any term it begins
does. The SQL below computes exactly this over `postings` and `fts_units.length`, so a
base ranks the same on PostgreSQL as on SQLite (tests/postgres/test_bm25_parity.py).

N and the total length are the sums of the `fts_stats` deltas each write transaction
appends (see schema.py), read in the query's snapshot: writers never contend on them.
"""

from __future__ import annotations

from psycopg import sql

from app.knowledge.pipeline.store.pg.tokens import Phrase

K1 = 1.2
B = 0.75
BODY_WEIGHT = 1.0
TITLE_WEIGHT = 2.0


def _prefix_end(prefix: str) -> str | None:
    """The least string above every string starting with `prefix` (code point order, as
    COLLATE "C" sorts UTF-8); None when the prefix ends in the last code point."""
    last = ord(prefix[-1])
    if last >= 0x10FFFF:
        return None
    return prefix[:-1] + chr(last + 1)


def _float(value: float) -> sql.Composed:
    return sql.SQL("{}::float8").format(sql.Literal(repr(float(value))))


def ranking_query(phrases: list[Phrase], limit: int) -> tuple[sql.Composed, list[object]]:
    """SQL returning (unit id, score) of the best `limit` passages, best first, and its
    parameters. `phrases` must not be empty."""
    parts: list[sql.Composable] = []
    params: list[object] = []
    for idx, phrase in enumerate(phrases):
        select = sql.SQL(
            "SELECT {} AS idx, unit_id, body_tf, title_tf FROM postings WHERE "
        ).format(sql.Literal(idx))
        end = _prefix_end(phrase.term) if phrase.prefix else None
        if not phrase.prefix:
            parts.append(select + sql.SQL("term = %s"))
            params.append(phrase.term)
        elif end is not None:
            parts.append(select + sql.SQL("term >= %s AND term < %s"))
            params.extend([phrase.term, end])
        else:
            parts.append(select + sql.SQL("starts_with(term, %s)"))
            params.append(phrase.term)
    found = sql.SQL(" UNION ALL ").join(parts)
    # Every constant is float8: a numeric one would make PostgreSQL compute in numeric,
    # slower and rounded differently from FTS5's doubles.
    query = sql.SQL(
        """
        WITH found AS ({found}),
        freq AS (
            SELECT idx, unit_id,
                   sum(body_tf)::float8 * {body} + sum(title_tf)::float8 * {title} AS f
            FROM found GROUP BY idx, unit_id
        ),
        hits AS (
            SELECT idx, unit_id, f, (count(*) OVER (PARTITION BY idx))::float8 AS nhit
            FROM freq
        ),
        stats AS (
            SELECT sum(units)::float8 AS n, sum(tokens)::float8 AS total FROM fts_stats
        )
        SELECT h.unit_id,
               sum(
                   CASE WHEN ln((s.n - h.nhit + 0.5::float8) / (h.nhit + 0.5::float8)) <= 0
                        THEN 1e-6::float8
                        ELSE ln((s.n - h.nhit + 0.5::float8) / (h.nhit + 0.5::float8)) END
                   * (h.f * ({k1} + 1::float8))
                   / (h.f + {k1} * (1::float8 - {b} + {b} * u.length::float8 / (s.total / s.n)))
               ) AS score
        FROM hits h
        JOIN fts_units u ON u.id = h.unit_id
        CROSS JOIN stats s
        GROUP BY h.unit_id
        ORDER BY score DESC, h.unit_id
        LIMIT %s
        """
    ).format(
        found=found,
        body=_float(BODY_WEIGHT),
        title=_float(TITLE_WEIGHT),
        k1=_float(K1),
        b=_float(B),
    )
    params.append(limit)
    return query, params
