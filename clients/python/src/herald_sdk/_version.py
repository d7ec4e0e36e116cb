"""The SDK's version, kept equal to the Herald server version it was generated from."""

__version__ = "0.1.0"
