"""Every interactive panel of the book, by name, and its data as the page embeds it.

Each topic owns its panels, as it owns its figures: "Gradients through time"
(``one-unit``, ``truncation-lanes``: :mod:`chapter_code.bptt.panels`), "Gated
memory: LSTM and GRU" (``lstm-gates``, ``forget-power``, ``keep-dial``:
:mod:`chapter_code.gated.panels`) and "Generating text" (``sampling-explorer``:
:mod:`chapter_code.sampling.panels`). What a panel is made of is in
:mod:`chapter_code.panels.beats`; the ``book-panel`` directive of
:mod:`bookbuild.site.panels` places them.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from chapter_code.bptt.panels import one_unit_panel, truncation_panel
from chapter_code.gated.panels import (
    forget_power_panel,
    keep_dial_panel,
    lstm_gates_panel,
)
from chapter_code.panels.beats import MOVE_MS, MS_PER_WORD, Panel, reading_words
from chapter_code.sampling.panels import sampling_panel

PANELS: dict[str, Callable[[], Panel]] = {
    "one-unit": one_unit_panel,
    "truncation-lanes": truncation_panel,
    "lstm-gates": lstm_gates_panel,
    "forget-power": forget_power_panel,
    "keep-dial": keep_dial_panel,
    "sampling-explorer": sampling_panel,
}


def panel(name: str) -> Panel:
    """The data of one panel, with its timing (``moveMs``, ``msPerWord``, each beat's
    ``words``); a clear error for an unknown name.
    """
    if name not in PANELS:
        raise ValueError(f"name must be one of {sorted(PANELS)}; got {name!r}")
    data = PANELS[name]()
    for key in ["title", "summary", "note"]:  # apostrophes as the page typesets them
        if key in data:
            data[key] = data[key].replace("'", "\u2019")
    if "check" in data:
        data["check"] = {k: v.replace("'", "\u2019") for k, v in data["check"].items()}
    data.setdefault("symbols", {})
    data["moveMs"] = MOVE_MS
    data["msPerWord"] = MS_PER_WORD
    for beat in data["beats"]:
        beat["words"] = reading_words(beat["text"])
    return data


def panel_json(name: str, data: Panel | None = None) -> str:
    """The panel's data as compact JSON, safe inside an HTML ``<script>`` element;
    ``data``, if given, is ``panel(name)`` already computed.
    """
    text = json.dumps(
        panel(name) if data is None else data,
        ensure_ascii=False,
        separators=(",", ":"),
        allow_nan=False,
    )
    return text.replace("<", "\\u003c")
