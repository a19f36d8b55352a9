"""Local models in the window: the Models dialog, its Qt model, the download controller and
the texts that describe a model."""
