"""docs/options.md is generated from the option model and must not go stale."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_options_doc_is_current():
    spec = importlib.util.spec_from_file_location("gen_options", ROOT / "docs" / "gen_options.py")
    assert spec and spec.loader
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    current = (ROOT / "docs" / "options.md").read_text()
    assert current == gen.render(), "docs/options.md is stale: run ./run py docs/gen_options.py"
