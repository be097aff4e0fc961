"""The `hudi-py` console command (entry point `hudi_ds.cli:main`)."""

from hudi_ds.cli.app import build_parser, main, parse_where

__all__ = ["build_parser", "main", "parse_where"]
