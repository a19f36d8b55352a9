"""Which process owns a running job (see app/knowledge/process_identity.py)."""

from __future__ import annotations

from app.knowledge.process_identity import current_owner, owner_alive

__all__ = ["current_owner", "owner_alive"]
