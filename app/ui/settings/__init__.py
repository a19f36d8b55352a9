"""Knowledge-base settings: the RAG settings panel, the new-base dialog and the model pickers."""

from app.ui.settings.model_picker import ModelListModel, ModelPicker, Purpose
from app.ui.settings.new_base_dialog import NewBaseDialog
from app.ui.settings.rag_form import RagSettings, RagSettingsForm
from app.ui.settings.rag_panel import RagSettingsPanel

__all__ = [
    "ModelListModel",
    "ModelPicker",
    "NewBaseDialog",
    "Purpose",
    "RagSettings",
    "RagSettingsForm",
    "RagSettingsPanel",
]
