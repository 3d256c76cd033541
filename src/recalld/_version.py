"""The package version, in a module of its own so adapters need not import the package root."""

__version__ = "0.3.0.dev0"
