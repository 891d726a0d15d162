"""Previews of stored values: bounded, and saying what they left out."""

from __future__ import annotations

from ferry._operations.preview import DEFAULT_PREVIEW_CHARS, preview_json, preview_text


def test_a_small_value_is_shown_whole() -> None:
    shown = preview_json({"org_id": "o-1", "n": 2})
    assert shown.render("; see more") == '{"org_id":"o-1","n":2}'
    assert shown.omitted_chars == 0


def test_a_large_value_is_cut_with_a_note_of_what_was_left_out() -> None:
    shown = preview_json({"blob": "x" * 10_000_000})
    assert len(shown.text) == DEFAULT_PREVIEW_CHARS
    assert shown.total_chars == 10_000_000 + len('{"blob":""}')
    rendered = shown.render("; --full prints it")
    assert rendered.endswith(f"… ({shown.omitted_chars:,} more characters; --full prints it)")


def test_text_is_cut_as_it_is() -> None:
    assert preview_text("abcdef", limit=3).render() == "abc… (3 more characters)"
