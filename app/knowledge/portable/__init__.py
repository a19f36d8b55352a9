"""Portable bases: a base exported as one `.trovebase` file and imported elsewhere, and
items copied or moved between bases with their stored vectors."""
