"""The Providers dialog: embedding and rerank providers, their keys and models."""

from app.ui.providers.providers_dialog import ProvidersDialog

__all__ = ["ProvidersDialog"]
