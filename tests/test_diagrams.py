"""The schematics (the loop and its unrolling; the LSTM and GRU cells; the stacked and
bidirectional wiring; the doubling scan) against snapshots.

A diagram is drawn from literal coordinates, so its only specification is what it
draws: every text, box, circle, arrow and line with its place and style, read back
from the artists by :func:`figure_facts.diagram_facts`. The snapshots in
tests/golden/ record the diagrams as the book shows them (its accepted
baselines); after changing a diagram on purpose, look at it, then rewrite them with
``BOOK_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_diagrams.py``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import matplotlib.pyplot as plt
import pytest

from chapter_code.beyond.diagrams import draw_doubling_scan
from chapter_code.depth.figures import draw_stacked_and_bidirectional
from chapter_code.gated.figures import draw_cell_diagram
from chapter_code.rnn.diagrams import draw_loop_and_unrolled
from tests.figure_facts import diagram_facts

GOLDEN = Path(__file__).parent / "golden"
DIAGRAMS = {
    "loop_and_unrolled_3": lambda: draw_loop_and_unrolled(3),
    "loop_and_unrolled_default": draw_loop_and_unrolled,
    "cell_lstm": lambda: draw_cell_diagram("lstm"),
    "cell_gru": lambda: draw_cell_diagram("gru"),
    "stacked_and_bidirectional_default": draw_stacked_and_bidirectional,
    "stacked_and_bidirectional_2": lambda: draw_stacked_and_bidirectional(2),
    "doubling_scan_default": draw_doubling_scan,
    "doubling_scan_5": lambda: draw_doubling_scan(5),
}


@pytest.mark.parametrize("name", sorted(DIAGRAMS))
def test_diagram_matches_its_snapshot(name: str) -> None:
    fig = DIAGRAMS[name]()
    facts = json.loads(json.dumps(diagram_facts(fig)))
    plt.close(fig)
    path = GOLDEN / f"{name}.json"
    if os.environ.get("BOOK_UPDATE_GOLDEN") == "1":
        path.write_text(json.dumps(facts, indent=1) + "\n")
    stored = json.loads(path.read_text())
    assert facts["size"] == stored["size"]
    assert len(facts["axes"]) == len(stored["axes"])
    for ours, theirs in zip(facts["axes"], stored["axes"], strict=True):
        for key in theirs:
            assert ours[key] == theirs[key], f"{name}: axes {key} differs"
