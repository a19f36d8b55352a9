"""Asking a base: an answer from a chat model grounded in retrieved passages, with citations.

question -> optional rewrite (rewrite.py) -> the search pipeline -> context assembly
(context.py) -> the versioned prompt (prompt.py, prompts/*.txt) -> the streamed answer ->
citations resolved to exact spans (citations.py). engine.py ties them together for the
facade; turns.py keeps the conversation per base.
"""
