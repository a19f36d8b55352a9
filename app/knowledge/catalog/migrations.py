"""The catalog's schema history: one function per version, run in order on open.

These are history: a released database was migrated by them as they stand, so they are never
edited; a change to the schema is a new version appended to `MIGRATIONS`.
"""

from __future__ import annotations

import apsw

from app.knowledge import db

# The name the v5 migration was written with.


def _v1(conn: apsw.Connection) -> None:
    conn.execute(
        """
        CREATE TABLE bases (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            embedding_model TEXT,
            dimensions INTEGER,
            rerank_model TEXT,
            document_count INTEGER NOT NULL DEFAULT 10 CHECK (document_count BETWEEN 1 AND 200),
            threshold REAL CHECK (threshold IS NULL OR threshold BETWEEN 0 AND 1),
            chunk_size INTEGER NOT NULL CHECK (chunk_size > 0),
            chunk_overlap INTEGER NOT NULL CHECK (chunk_overlap >= 0 AND chunk_overlap < chunk_size),
            status TEXT NOT NULL CHECK (status IN ('completed', 'failed')),
            status_reason TEXT,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            CHECK ((embedding_model IS NULL) = (dimensions IS NULL))
        );
        CREATE TABLE items (
            id TEXT PRIMARY KEY,
            base_id TEXT NOT NULL REFERENCES bases(id) ON DELETE CASCADE,
            parent_id TEXT REFERENCES items(id) ON DELETE CASCADE,
            type TEXT NOT NULL CHECK (type IN ('file', 'directory', 'url', 'sitemap', 'note')),
            source TEXT NOT NULL,
            title TEXT NOT NULL,
            relative_path TEXT,
            status TEXT NOT NULL
                CHECK (status IN ('preparing', 'processing', 'completed', 'failed', 'deleting')),
            phase TEXT CHECK (phase IS NULL OR phase IN ('reading', 'embedding', 'writing', 'waiting')),
            progress REAL,
            error_code TEXT,
            error_message TEXT,
            chunk_count INTEGER NOT NULL DEFAULT 0,
            size INTEGER,
            content_hash TEXT,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        );
        CREATE INDEX items_base_status ON items(base_id, status);
        CREATE INDEX items_parent ON items(parent_id);
        CREATE INDEX items_base_source ON items(base_id, source);
        CREATE INDEX items_base_hash ON items(base_id, content_hash);
        CREATE TABLE jobs (
            id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL,
            base_id TEXT NOT NULL REFERENCES bases(id) ON DELETE CASCADE,
            item_id TEXT,
            payload TEXT NOT NULL DEFAULT '{}',
            idempotency_key TEXT,
            status TEXT NOT NULL DEFAULT 'queued'
                CHECK (status IN ('queued', 'running', 'done', 'failed', 'abandoned')),
            attempts INTEGER NOT NULL DEFAULT 0,
            not_before REAL NOT NULL DEFAULT 0,
            last_error TEXT,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        );
        -- Only one live job per idempotency key: adding the same thing twice enqueues once.
        CREATE UNIQUE INDEX jobs_live_key ON jobs(idempotency_key)
            WHERE status IN ('queued', 'running');
        CREATE INDEX jobs_queue ON jobs(base_id, status, not_before);
        """
    )


def _v2(conn: apsw.Connection) -> None:
    # Which process runs a job, so recovery after a crash never touches a live process's work.
    conn.execute("ALTER TABLE jobs ADD COLUMN owner TEXT")
    # Options a folder root was added with (extensions, include/exclude globs), so a reindex
    # re-scans the folder the same way.
    conn.execute("ALTER TABLE items ADD COLUMN options TEXT")


def _v3(conn: apsw.Connection) -> None:
    # Provider settings; their API keys live in the OS keychain, never here.
    conn.execute(
        """
        CREATE TABLE providers (
            id TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            display_name TEXT NOT NULL DEFAULT '',
            base_url TEXT NOT NULL DEFAULT '',
            enabled INTEGER NOT NULL DEFAULT 1,
            models TEXT NOT NULL DEFAULT '[]',
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        )
        """
    )


def _v4(conn: apsw.Connection) -> None:
    # Whether agent tools (kb_manage over MCP) may add, delete and refresh items in a base.
    # Off unless the person turns it on.
    conn.execute("ALTER TABLE bases ADD COLUMN agent_writes INTEGER NOT NULL DEFAULT 0")


# The job columns as schema 4 has them: a migration is history, so it names its own columns
# rather than the current ones (a later column would not exist yet in a v4 file).
_V5_JOB_COLUMNS = (
    "id, kind, base_id, item_id, payload, idempotency_key, status, attempts, not_before, "
    "last_error, created_at, updated_at, owner"
)


def _v5(conn: apsw.Connection) -> None:
    # Job ids are never reused (AUTOINCREMENT): finished jobs are deleted, and a plain rowid
    # key hands a deleted job's id to the next job, so a process still holding the old id
    # (its row removed by a base deletion, say) would finish or retry somebody else's job.
    conn.execute(
        """
        CREATE TABLE jobs_v5 (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            kind TEXT NOT NULL,
            base_id TEXT NOT NULL REFERENCES bases(id) ON DELETE CASCADE,
            item_id TEXT,
            payload TEXT NOT NULL DEFAULT '{}',
            idempotency_key TEXT,
            status TEXT NOT NULL DEFAULT 'queued'
                CHECK (status IN ('queued', 'running', 'done', 'failed', 'abandoned')),
            attempts INTEGER NOT NULL DEFAULT 0,
            not_before REAL NOT NULL DEFAULT 0,
            last_error TEXT,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            owner TEXT
        )
        """
    )
    # Rows the old table holds are copied as they are (damaged ones too: doctor reports them).
    conn.execute("PRAGMA ignore_check_constraints=ON")
    try:
        conn.execute(f"INSERT INTO jobs_v5 ({_V5_JOB_COLUMNS}) SELECT {_V5_JOB_COLUMNS} FROM jobs")
    finally:
        conn.execute("PRAGMA ignore_check_constraints=OFF")
    conn.execute("DROP TABLE jobs")
    conn.execute("ALTER TABLE jobs_v5 RENAME TO jobs")
    conn.execute(
        "CREATE UNIQUE INDEX jobs_live_key ON jobs(idempotency_key) "
        "WHERE status IN ('queued', 'running')"
    )
    conn.execute("CREATE INDEX jobs_queue ON jobs(base_id, status, not_before)")


def _v6(conn: apsw.Connection) -> None:
    # The languages the person says an embedding model covers, overriding what Trove knows
    # of it (its manifest, the table of known models); a JSON list of language codes.
    conn.execute(
        """
        CREATE TABLE model_languages (
            model_id TEXT PRIMARY KEY,
            languages TEXT NOT NULL,
            updated_at REAL NOT NULL
        )
        """
    )


def _v7(conn: apsw.Connection) -> None:
    # App-wide settings that belong to no base or provider (the model hub mirror).
    conn.execute(
        """
        CREATE TABLE settings (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL,
            updated_at REAL NOT NULL
        )
        """
    )


# -- linked folders (sync) ------------------------------------------------------------


def _v8(conn: apsw.Connection) -> None:
    # Linked folders: a folder item kept in sync with its source folder. A row here is the
    # link; its sync state (and last error) is what the window and `trove sync` show.
    # `files` is what each child's source looked like when it was last taken in (size,
    # mtime, content hash), so a sync re-reads only what changed and finds renames by hash.
    # `sync_log` keeps the last few syncs' changes per folder.
    conn.execute(
        """
        CREATE TABLE linked_folders (
            item_id TEXT PRIMARY KEY REFERENCES items(id) ON DELETE CASCADE,
            base_id TEXT NOT NULL REFERENCES bases(id) ON DELETE CASCADE,
            ignore_patterns TEXT NOT NULL DEFAULT '[]',
            state TEXT NOT NULL DEFAULT 'idle' CHECK (state IN ('idle', 'syncing')),
            done INTEGER NOT NULL DEFAULT 0,
            total INTEGER NOT NULL DEFAULT 0,
            last_synced_at REAL,
            last_error TEXT,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        );
        CREATE TABLE sync_files (
            item_id TEXT PRIMARY KEY REFERENCES items(id) ON DELETE CASCADE,
            root_id TEXT NOT NULL REFERENCES items(id) ON DELETE CASCADE,
            size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL,
            content_hash TEXT NOT NULL
        );
        CREATE INDEX sync_files_root ON sync_files(root_id);
        CREATE TABLE sync_log (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            root_id TEXT NOT NULL REFERENCES items(id) ON DELETE CASCADE,
            finished_at REAL NOT NULL,
            added INTEGER NOT NULL,
            changed INTEGER NOT NULL,
            removed INTEGER NOT NULL,
            renamed INTEGER NOT NULL,
            deferred INTEGER NOT NULL,
            paths TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX sync_log_root ON sync_log(root_id, id);
        -- Scheduled refresh of URL and sitemap items: off unless an interval is set. The
        -- validators (ETag, Last-Modified) and the text hash of each page fetched by it.
        CREATE TABLE url_refresh (
            item_id TEXT PRIMARY KEY REFERENCES items(id) ON DELETE CASCADE,
            base_id TEXT NOT NULL REFERENCES bases(id) ON DELETE CASCADE,
            interval_s REAL NOT NULL CHECK (interval_s > 0),
            next_at REAL NOT NULL
        );
        CREATE TABLE page_validators (
            item_id TEXT PRIMARY KEY REFERENCES items(id) ON DELETE CASCADE,
            etag TEXT,
            last_modified TEXT,
            text_hash TEXT,
            checked_at REAL NOT NULL
        );
        """
    )


# -- text recognition (OCR) -------------------------------------------------------------


def _v9(conn: apsw.Connection) -> None:
    # Text recognition (OCR) per base: on/off (NULL: on when the `ocr` extra is installed),
    # the languages to read (comma-separated codes) and the most pages read per document.
    conn.execute("ALTER TABLE bases ADD COLUMN ocr_enabled INTEGER")
    conn.execute("ALTER TABLE bases ADD COLUMN ocr_languages TEXT NOT NULL DEFAULT 'ch,en'")
    conn.execute(
        "ALTER TABLE bases ADD COLUMN ocr_max_pages INTEGER NOT NULL DEFAULT 100 "
        "CHECK (ocr_max_pages > 0)"
    )


# -- asking a base (Ask view, trove ask) --------------------------------------------------


def _v10(conn: apsw.Connection) -> None:
    # Asking a base (issue 21): the conversation kept per base, and each base's ask options
    # (whether a follow-up question is rewritten into a standalone query before retrieval).
    # A turn keeps its numbered sources (JSON) so its citations still open after a restart.
    conn.execute(
        """
        CREATE TABLE ask_turns (
            id INTEGER PRIMARY KEY,
            base_id TEXT NOT NULL REFERENCES bases(id) ON DELETE CASCADE,
            question TEXT NOT NULL,
            query TEXT NOT NULL,
            answer TEXT NOT NULL,
            sources TEXT NOT NULL DEFAULT '[]',
            chat_model TEXT NOT NULL,
            state TEXT NOT NULL DEFAULT 'complete',
            created_at REAL NOT NULL
        );
        CREATE INDEX ask_turns_base ON ask_turns(base_id, id);
        CREATE TABLE ask_options (
            base_id TEXT PRIMARY KEY REFERENCES bases(id) ON DELETE CASCADE,
            rewrite INTEGER NOT NULL DEFAULT 0,
            updated_at REAL NOT NULL
        );
        """
    )


# -- where a base's index lives (issue 20) ------------------------------------------------


def _v11(conn: apsw.Connection) -> None:
    # A base's index is this machine's SQLite file or a schema on a PostgreSQL server; the
    # server's address is kept without its password (that goes to the keychain).
    conn.execute(
        "ALTER TABLE bases ADD COLUMN backend TEXT NOT NULL DEFAULT 'sqlite' "
        "CHECK (backend IN ('sqlite', 'postgres'))"
    )
    conn.execute("ALTER TABLE bases ADD COLUMN dsn TEXT")


# -- what agents' web pages may reach (issue 31) ----------------------------------------


def _v12(conn: apsw.Connection) -> None:
    # The person lets web pages that agents add (and those of imported bases) reach this
    # computer and the local network; off, they reach only public internet addresses.
    conn.execute("ALTER TABLE bases ADD COLUMN agent_private_urls INTEGER NOT NULL DEFAULT 0")


MIGRATIONS: list[db.Migration] = [
    _v1, _v2, _v3, _v4, _v5, _v6, _v7, _v8, _v9, _v10, _v11, _v12
]  # fmt: skip
