"""Stored text reaches a terminal as text: control characters and escapes written out."""

from __future__ import annotations

import logging

from ferry._logs import TextFormatter
from ferry._printable import printable


def test_every_control_and_direction_character_is_written_as_an_escape() -> None:
    assert printable("plain [bold]text[/bold] ü ✓") == "plain [bold]text[/bold] ü ✓"
    assert printable("a\x1b[2Jb") == "a\\x1b[2Jb"
    assert printable("\x1b]8;;https://x\x07link") == "\\x1b]8;;https://x\\x07link"
    assert printable("over\rwrite\x9b31m") == "over\\rwrite\\x9b31m"
    assert printable("rtl\u202eevil\u2066") == "rtl\\u202eevil\\u2066"
    assert printable("two\nlines\tand\x7f") == "two\\nlines\\tand\\x7f"


def test_lines_keeps_newlines_and_tabs_but_not_the_rest() -> None:
    traceback = 'Traceback:\n\tFile "x"\r\x1b[31m'
    assert printable(traceback, lines=True) == 'Traceback:\n\tFile "x"\\r\\x1b[31m'


def test_a_text_log_line_escapes_what_its_fields_and_message_carry() -> None:
    record = logging.makeLogRecord(
        {"name": "ferry.jobs", "levelname": "INFO", "msg": "jobs.run.dead\x1b[2J", "args": ()}
    )
    record.__dict__["job"] = "evil\x1b]8;;x\x07"
    line = TextFormatter().format(record)
    assert "\x1b" not in line and "\x07" not in line
    assert line.endswith("jobs.run.dead\\x1b[2J job=evil\\x1b]8;;x\\x07")
