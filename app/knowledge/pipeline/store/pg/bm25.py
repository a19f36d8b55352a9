"""BM25 over the postings, the same numbers as FTS5's `bm25(chunks_fts, 1.0, 2.0)`.

FTS5 (fts5_aux.c) scores a row, for the phrases p of the query, as

    sum_p idf(p) * f(p) * (k1 + 1) / (f(p) + k1 * (1 - b + b * D / avgdl))

with k1 = 1.2, b = 0.75; f(p) = the sum over columns of weight * occurrences of p (body
1.0, title 2.0); D = the row's tokens in all columns (unweighted); avgdl = all tokens /
all rows; idf(p) = ln((N - n(p) + 0.5) / (n(p) + 0.5)), 1e-6 where that is <= 0, N the
rows and n(p) the rows p occurs in. A prefix phrase occurs wherever any term it begins
does. The SQL below computes exactly this over `postings` (which carry each passage's
length), so a base ranks the same on PostgreSQL as on SQLite
(tests/postgres/test_bm25_parity.py).

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


def _phrase_rows(idx: int, phrase: Phrase) -> tuple[sql.Composed, list[object]]:
    """(idx, unit id, f, passage length) of every passage the phrase occurs in. A term's
    postings are unique per passage; a prefix's are summed over the terms it begins."""
    end = _prefix_end(phrase.term) if phrase.prefix else None
    if not phrase.prefix:
        where, params = sql.SQL("term = %s"), [phrase.term]
    elif end is not None:
        where, params = sql.SQL("term >= %s AND term < %s"), [phrase.term, end]
    else:
        where, params = sql.SQL("starts_with(term, %s)"), [phrase.term]
    if not phrase.prefix:
        select = sql.SQL(
            "SELECT {idx} AS idx, unit_id, body_tf::float8 * {body} + title_tf::float8 * {title}"
            " AS f, unit_length FROM postings WHERE {where}"
        )
    else:
        select = sql.SQL(
            "SELECT {idx} AS idx, unit_id, sum(body_tf)::float8 * {body}"
            " + sum(title_tf)::float8 * {title} AS f, min(unit_length) AS unit_length"
            " FROM postings WHERE {where} GROUP BY unit_id"
        )
    query = select.format(
        idx=sql.Literal(idx), body=_float(BODY_WEIGHT), title=_float(TITLE_WEIGHT), where=where
    )
    return query, list(params)


def ranking_query(phrases: list[Phrase], limit: int) -> tuple[sql.Composed, list[object]]:
    """SQL returning (unit id, score) of the best `limit` passages, best first, and its
    parameters. `phrases` must not be empty.

    Each phrase's postings are read once, by an index-only scan of the postings key (which
    carries the counts and the passage length), into `found`; the phrases' passage counts
    (idf) come from that, then one aggregate sums the per-phrase terms by passage."""
    parts: list[sql.Composable] = []
    params: list[object] = []
    for idx, phrase in enumerate(phrases):
        part, part_params = _phrase_rows(idx, phrase)
        parts.append(part)
        params.extend(part_params)
    found = sql.SQL(" UNION ALL ").join(parts)
    # Every constant is float8: a numeric one would make PostgreSQL compute in numeric,
    # slower and rounded differently from FTS5's doubles.
    query = sql.SQL(
        """
        WITH found AS MATERIALIZED ({found}),
        stats AS (
            SELECT sum(units)::float8 AS n, sum(tokens)::float8 AS total FROM fts_stats
        ),
        idf AS (
            SELECT d.idx,
                   CASE WHEN ln((s.n - d.nhit + 0.5::float8) / (d.nhit + 0.5::float8)) <= 0
                        THEN 1e-6::float8
                        ELSE ln((s.n - d.nhit + 0.5::float8) / (d.nhit + 0.5::float8)) END
                   AS w
            FROM (SELECT idx, count(*)::float8 AS nhit FROM found GROUP BY idx) d
            CROSS JOIN stats s
        )
        SELECT f.unit_id,
               sum(i.w * (f.f * ({k1} + 1::float8))
                   / (f.f + {k1} * (1::float8 - {b} + {b} * f.unit_length::float8
                      / (s.total / s.n)))) AS score
        FROM found f
        JOIN idf i ON i.idx = f.idx
        CROSS JOIN stats s
        GROUP BY f.unit_id
        ORDER BY score DESC, f.unit_id
        LIMIT %s
        """
    ).format(found=found, k1=_float(K1), b=_float(B))
    params.append(limit)
    return query, params
