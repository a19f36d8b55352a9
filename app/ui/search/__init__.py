"""The search view of the main window (DESIGN.md sections 6 and 9)."""

from app.ui.search.chunk_viewer import ChunkViewer, MaterialView, load_material
from app.ui.search.debug_strip import DebugStrip
from app.ui.search.result_delegate import ResultDelegate
from app.ui.search.results_model import ResultRole, SearchResultsModel
from app.ui.search.search_view import SearchView, ViewState

__all__ = [
    "ChunkViewer",
    "DebugStrip",
    "MaterialView",
    "ResultDelegate",
    "ResultRole",
    "SearchResultsModel",
    "SearchView",
    "ViewState",
    "load_material",
]
