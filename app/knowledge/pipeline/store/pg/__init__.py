"""A base's index in PostgreSQL (+ pgvector): one schema per base, same API as IndexStore."""
