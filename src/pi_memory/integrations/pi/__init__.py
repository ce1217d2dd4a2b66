"""pi coding agent integration: the TypeScript extension, its Python bridge, installer and demo."""

from pathlib import Path

EXTENSION_DIR = Path(__file__).resolve().parent / "extension"

__all__ = ["EXTENSION_DIR"]
