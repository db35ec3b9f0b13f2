"""The interactive panels on the built pages, driven in Chromium: keyboard, reduced motion, transcript, numbers.

Every panel of :mod:`chapter_code.panels.data` is opened on the page that holds
it. The tests check that the player starts paused on the final beat with the
static figure replaced; that the keyboard alone reaches every beat and every
control; that with ``prefers-reduced-motion`` no frame is drawn between two
beats (and that without it, frames are); that the transcript has one entry per
beat, equal to the Python data; and that where the JavaScript recomputes a
panel for a slider value, it agrees with the Python function to a relative
tolerance of ``JS_REL_TOL`` (both compute in IEEE double precision; the
difference is rounding in ``tanh``, ``exp`` and powers, accumulated over at
most 80 steps, or in a softmax's sum over six tokens). For the sampling
explorer a token cut by top-k or the nucleus must be cut on both sides: its
probability is an exact zero, compared with no tolerance.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from chapter_code.panels import data as panel_data
from chapter_code.panels.data import PANELS

#: Where each panel lives.
PAGE_OF = {
    "one-unit": "book/gradients.html",
    "truncation-lanes": "book/gradients.html",
    "lstm-gates": "book/gated.html",
    "forget-power": "book/gated.html",
    "keep-dial": "book/gated.html",
    "sampling-explorer": "book/generating.html",
}
#: Relative tolerance between a JavaScript number and the Python one (float64 both sides).
JS_REL_TOL = 1e-12


def test_every_panel_has_a_page() -> None:
    assert set(PAGE_OF) == set(PANELS)


@pytest.fixture(params=[False, True], ids=["motion", "reduced-motion"])
def reduced(request: pytest.FixtureRequest) -> bool:
    return request.param


def _open(browser, site_dir: Path, name: str, reduced_motion: bool = False) -> Iterator[object]:  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport={"width": 1280, "height": 900},
                                  reduced_motion="reduce" if reduced_motion else "no-preference")
    context.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file://") else r.abort())
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto((site_dir / PAGE_OF[name]).as_uri())
    page.wait_for_function(f"() => document.getElementById('panel-{name}').bookPanel !== undefined", timeout=15000)
    page.console_errors = errors  # type: ignore[attr-defined]
    return context, page


@pytest.fixture
def opened(browser, site_dir: Path, request: pytest.FixtureRequest) -> Iterator[object]:  # type: ignore[no-untyped-def]
    name = request.param
    context, page = _open(browser, site_dir, name)
    yield page, name
    assert page.console_errors == []
    context.close()


def attr(page, name: str, key: str) -> str:  # type: ignore[no-untyped-def]
    return page.get_attribute(f"#panel-{name}", f"data-{key}")


def embedded(page, name: str) -> dict:  # type: ignore[no-untyped-def]
    return json.loads(page.locator(f"#panel-{name} script.book-panel-data").text_content())


@pytest.mark.parametrize("opened", list(PANELS), indirect=True)
def test_panel_loads_paused_on_its_final_state(opened) -> None:  # type: ignore[no-untyped-def]
    page, name = opened
    panel = page.locator(f"#panel-{name}")
    data = embedded(page, name)
    assert attr(page, name, "playing") == "false"
    assert attr(page, name, "beat") == str(len(data["beats"]) - 1)  # the final state is drawn on load
    assert panel.locator("noscript, .book-panel-static").count() == 0  # the static figure gave way to the live one
    assert page.evaluate(f"() => performance.getEntriesByType('resource').filter(r => r.name.includes('{name}.png'))"
                         ".length") == 0  # and was not downloaded
    assert panel.locator("svg *").count() > 5  # something drawn
    assert data["beats"][-1]["text"] in panel.locator(".book-panel-now").text_content()


@pytest.mark.parametrize("opened", list(PANELS), indirect=True)
def test_keyboard_alone_reaches_every_beat_and_control(opened) -> None:  # type: ignore[no-untyped-def]
    page, name = opened
    _drive_by_keyboard(page, name)


def _drive_by_keyboard(page, name: str) -> None:  # type: ignore[no-untyped-def]
    data = embedded(page, name)
    n = len(data["beats"])
    root = f"#panel-{name}"
    # Reach the drawing by Tab from the panel's title, as a keyboard reader moving down the page would.
    page.evaluate(f"() => {{ const t = document.querySelector('{root} .book-panel-title');"
                  " t.tabIndex = -1; t.focus(); }")
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.classList.contains('book-panel-stage')")
    outline = page.evaluate("() => getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none", "the focused drawing shows no focus outline"
    page.keyboard.press("Home")
    seen = [int(attr(page, name, "beat"))]
    for _ in range(n - 1):
        page.keyboard.press("ArrowRight")
        seen.append(int(attr(page, name, "beat")))
        assert data["beats"][seen[-1]]["text"] in page.locator(f"{root} .book-panel-now").text_content()
    assert seen == list(range(n))
    page.keyboard.press("ArrowLeft")
    assert attr(page, name, "beat") == str(n - 2)
    page.keyboard.press("End")
    assert attr(page, name, "beat") == str(n - 1)
    page.keyboard.press(" ")
    assert attr(page, name, "playing") == "true"
    assert attr(page, name, "beat") == "0"
    page.keyboard.press("Escape")
    assert attr(page, name, "playing") == "false"
    page.keyboard.press("k")
    assert attr(page, name, "playing") == "true"
    page.keyboard.press("K")
    assert attr(page, name, "playing") == "false"

    # Tab on through the controls: play button, scrubber, speed menu, then each parameter slider.
    reached = []
    for _ in range(4 + len(data["controls"])):
        page.keyboard.press("Tab")
        reached.append(page.evaluate("() => document.activeElement.id || document.activeElement.className"))
    controls = [f"panel-{name}-{c['id']}" for c in data["controls"]]
    assert "book-panel-play" in reached
    assert f"panel-{name}-beat" in reached
    assert f"panel-{name}-speed" in reached
    assert set(controls) <= set(reached), f"controls not reached by Tab: {set(controls) - set(reached)}"

    page.focus(f"#panel-{name}-beat")
    page.keyboard.press("Home")
    assert attr(page, name, "beat") == "0"
    page.keyboard.press("ArrowRight")
    assert attr(page, name, "beat") == "1"
    page.focus(f"#panel-{name}-speed")
    page.keyboard.press("ArrowDown")
    assert page.evaluate(f"() => document.querySelector('{root}').bookPanel.speed") == 1.5
    page.focus(f"{root} .book-panel-play")
    page.keyboard.press("Enter")
    assert attr(page, name, "playing") == "true"
    for control in data["controls"]:
        before = page.inner_html(f"{root} svg")
        slider = f"#panel-{name}-{control['id']}"
        page.focus(slider)
        at_max = page.evaluate(f"() => {{ const i = document.querySelector('{slider}'); return +i.value >= +i.max; }}")
        page.keyboard.press("ArrowLeft" if at_max else "ArrowRight")  # pauses and recomputes the picture
        assert attr(page, name, "playing") == "false"
        assert page.inner_html(f"{root} svg") != before
        assert "Your setting" in page.locator(f"{root} .book-panel-now").text_content()


@pytest.mark.parametrize("name", list(PANELS))
def test_reduced_motion_shows_finished_beats_only(browser, site_dir: Path, name: str, reduced: bool) -> None:  # type: ignore[no-untyped-def]
    context, page = _open(browser, site_dir, name, reduced_motion=reduced)
    try:
        root = f"#panel-{name}"
        page.evaluate(
            f"() => {{ const r = document.querySelector('{root}'); r.seenProgress = [];"
            " new MutationObserver(() => r.seenProgress.push(r.dataset.progress))"
            ".observe(r, {attributes: true, attributeFilter: ['data-progress', 'data-beat']});"
            " r.bookPanel.speed = 2; r.bookPanel.seek(0); r.bookPanel.play(); }"
        )
        page.wait_for_function(f"() => document.querySelector('{root}').dataset.beat === '2'", timeout=15000)
        page.wait_for_timeout(100)
        frames = page.evaluate(f"() => document.querySelector('{root}').bookPanel.movingFrames")
        progress = page.evaluate(f"() => document.querySelector('{root}').seenProgress")
        if reduced:
            assert frames == 0
            assert set(progress) == {"1"}, "a state between two beats was drawn under reduced motion"
        else:
            assert frames > 0
            assert any(p != "1" for p in progress)
        assert page.console_errors == []
    finally:
        context.close()


@pytest.mark.parametrize("opened", list(PANELS), indirect=True)
def test_transcript_has_one_entry_per_beat(opened) -> None:  # type: ignore[no-untyped-def]
    page, name = opened
    beats = panel_data.panel(name)["beats"]
    items = page.locator(f"#panel-{name} details.book-panel-transcript li")
    assert items.count() == len(beats) == len(embedded(page, name)["beats"])
    assert [i.text_content().strip() for i in items.all()] == [b["text"] for b in beats]
    assert not items.first.is_visible()  # folded until asked for
    page.locator(f"#panel-{name} details.book-panel-transcript summary").focus()
    page.keyboard.press("Enter")  # the transcript opens from the keyboard
    assert items.first.is_visible()


JS_CASES = {
    "one-unit": ([{"w": w, "x": x} for w in (-2.5, -0.7, 0.3, 1.05, 2.2) for x in (-0.6, 0.0, 0.35)],
                 lambda p: panel_data.one_unit_curves(p["w"], p["x"])),
    "forget-power": ([{"b": b} for b in (-3.0, -1.3, 0.0, 0.55, 1.0, 2.7, 4.95)],
                     lambda p: {"curve": panel_data.forget_curve(p["b"])}),
    "keep-dial": ([{"u": u} for u in (0.0, 0.13, 0.5, 0.77, 1.0)], lambda p: panel_data.dial_parts(p["u"])),
    # k = 2.4 is a value between two beats while the animation moves: the JavaScript snaps it to the count 2
    "sampling-explorer": ([{"tau": t, "k": k, "p": p} for t in (0.1, 0.35, 1.0, 1.65, 3.95) for k in (1, 2.4, 4, 6)
                           for p in (0.05, 0.5, 0.9, 0.97, 1.0)],
                          lambda p: panel_data.sampling_parts(p["tau"], round(p["k"]), p["p"])),
}


@pytest.mark.parametrize("name", list(JS_CASES))
def test_javascript_numbers_match_python(browser, site_dir: Path, name: str) -> None:  # type: ignore[no-untyped-def]
    context, page = _open(browser, site_dir, name)
    try:
        params, python = JS_CASES[name]
        for p in params:
            got = page.evaluate(
                "([name, p]) => { const d = document.getElementById('panel-' + name).bookPanel.data;"
                " const r = BookPanels.compute(name, p, d); return Array.isArray(r) ? {curve: r} : r; }",
                [name, p],
            )
            want = python(p)
            for key, value in want.items():
                got_v = got[key]
                if isinstance(value, list):
                    assert len(got_v) == len(value)
                    for a, b in zip(got_v, value, strict=True):
                        assert a == pytest.approx(b, rel=JS_REL_TOL, abs=1e-300), (name, p, key)
                else:
                    assert got_v == pytest.approx(value, rel=JS_REL_TOL, abs=1e-15), (name, p, key)
    finally:
        context.close()


@pytest.mark.parametrize("name", list(PANELS))
def test_without_javascript_the_static_figure_and_transcript_stand(browser, site_dir: Path, name: str) -> None:  # type: ignore[no-untyped-def]
    context = browser.new_context(java_script_enabled=False, viewport={"width": 390, "height": 844})
    try:
        page = context.new_page()
        page.goto((site_dir / PAGE_OF[name]).as_uri())
        img = page.locator(f"#panel-{name} .book-panel-static img")
        img.scroll_into_view_if_needed()
        page.wait_for_function("(i) => i.complete && i.naturalWidth > 0", arg=img.element_handle(), timeout=10000)
        assert img.is_visible()
        assert img.get_attribute("alt")
        beats = len(panel_data.panel(name)["beats"])
        assert page.locator(f"#panel-{name} details.book-panel-transcript li").count() == beats
        assert page.locator(f"#panel-{name} .book-panel-stage").count() == 0
    finally:
        context.close()


def test_javascript_prints_numbers_as_python_does(browser, site_dir: Path) -> None:  # type: ignore[no-untyped-def]
    context, page = _open(browser, site_dir, "keep-dial")
    try:
        values = [0.0, 0.35, 0.5334, -0.0098, 1e-3, 9.99e-4, 2.6e-4, 4.2e-18, 9999.0, 1e4, -1.15e18, 3.1e-73]
        for digits in (1, 2, 3):
            got = page.evaluate("([vs, d]) => vs.map((v) => BookPanels.number(v, d))", [values, digits])
            assert got == [panel_data.number(v, digits) for v in values], digits
    finally:
        context.close()


def test_a_count_moving_between_beats_is_drawn_and_shown_whole(browser, site_dir: Path) -> None:  # type: ignore[no-untyped-def]
    context, page = _open(browser, site_dir, "sampling-explorer")
    try:
        beats = panel_data.panel("sampling-explorer")["beats"]
        move = next(i for i in range(1, len(beats)) if beats[i]["state"]["k"] != beats[i - 1]["state"]["k"])
        k_from, k_to = beats[move - 1]["state"]["k"], beats[move]["state"]["k"]
        shown = page.evaluate(
            "(i) => { const r = document.getElementById('panel-sampling-explorer'); const P = r.bookPanel;"
            " P.index = i; P.progress = 0.4; P.render();"
            " return [r.querySelector('output[for=\"panel-sampling-explorer-k\"]').textContent,"
            " r.querySelector('svg').textContent]; }",
            move,
        )
        k = round(k_from + (k_to - k_from) * 0.4)
        assert shown[0] == str(k)
        assert f"top-k, k = {k}: {k} kept" in shown[1]
        assert page.console_errors == []
    finally:
        context.close()
