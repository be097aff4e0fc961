"""hoodie.properties text (java.util.Properties): what hudi-py writes reads back the same, escapes and all."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from hudi_ds.config.properties import dumps, loads

_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)  # no lone surrogate halves


@given(st.dictionaries(_TEXT.filter(bool), _TEXT, max_size=6), st.one_of(st.none(), st.just("a comment")))
def test_properties_read_back_as_written(props: dict[str, str], comment: str | None) -> None:
    assert loads(dumps(props, comment)) == props


def test_java_escapes_and_continuations_are_undone() -> None:
    text = "# comment\n! another\n  a\\ key = v\\u00e9\\tx\\\n    continued\nplain:value\nb=\\=\\:\\\\\n"
    assert loads(text) == {"a key": "vé\txcontinued", "plain": "value", "b": "=:\\"}
