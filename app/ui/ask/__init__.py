"""The Ask view: a question answered by a chat model from a base's passages, with citations
that open the passage viewer (issue 21)."""

from app.ui.ask.ask_view import AskState, AskView
from app.ui.ask.sources_model import AskSourcesModel, SourceRole

__all__ = ["AskSourcesModel", "AskState", "AskView", "SourceRole"]
