"""The interactive panels on the built pages, driven in Chromium: reading, layout,
keyboard, motion, numbers.

Every panel of :mod:`chapter_code.panels.data` is opened on the page that holds
it, at desktop and phone widths (1280 and 390 px) in the theme's light and dark
modes (issue 28, item 5). The tests check that the player opens on its first
beat, paused, with the static figure replaced, and waits there until the reader
steps it; that playing holds each beat for a time in proportion to the words of
its narration (read off a fake clock); that below 600 px of stage width the
drawing takes its narrow layout and that no text of the panel is under
:data:`MIN_TEXT_PX` CSS px; that no two labels of a drawing collide and none
leaves it, at every beat, half-way between beats and at the corners of its
sliders (element boxes, measured in the browser); that every axis drawn has a
label; that the math of titles, summaries, narration and slider labels is the
book's typeset math and that no TeX source shows, in the drawing either. Also
that the keyboard alone reaches every beat and every
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

import itertools
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from chapter_code.bptt import panels as bptt_panels
from chapter_code.gated import panels as gated_panels
from chapter_code.panels import beats as panel_beats
from chapter_code.panels import data as panel_data
from chapter_code.panels.beats import reading_words
from chapter_code.panels.data import PANELS
from chapter_code.sampling import panels as sampling_panels
from tests.browser.conftest import OnFirstUse, new_context
from tests.browser.test_pages import VIEWPORTS, open_page

#: The pages opened per width and scheme (and the shared desk pages) are module
#: fixtures: on one worker (make test: --dist loadgroup) each is opened once, not once
#: per worker.
pytestmark = pytest.mark.xdist_group("panels")

#: Where each panel lives.
PAGE_OF = {
    "one-unit": "book/gradients.html",
    "truncation-lanes": "book/gradients.html",
    "lstm-gates": "book/gated.html",
    "forget-power": "book/gated.html",
    "keep-dial": "book/gated.html",
    "sampling-explorer": "book/generating.html",
}
#: Relative tolerance between a JavaScript number and the Python one (float64 both
#: sides).
JS_REL_TOL = 1e-12
#: Smallest text a panel may show, drawing included, in CSS px (issue 28: 12 px on a
#: phone).
MIN_TEXT_PX = 12.0
#: Stage width below which a drawing takes its narrow layout, in CSS px.
NARROW_BELOW = 600
#: The axes each drawing has (each must carry a label); the truncation lanes are a
#: diagram of states, no plot.
AXES = {
    "one-unit": {"x", "y"},
    "truncation-lanes": set(),
    "lstm-gates": {"gate", "value"},
    "forget-power": {"x", "y"},
    "keep-dial": {"state"},
    "sampling-explorer": {"probability-1", "probability-2", "probability-3"},
}
#: How far a beat's measured duration on the fake clock may stray from its reading time:
#: two frames (a move ends on the first frame after its time is up, and the frames fall
#: on the clock's 16 ms grid).
CLOCK_TOL_MS = 40
CONFIGS = [(viewport, scheme) for viewport in VIEWPORTS for scheme in ("light", "dark")]
#: The timeline is the same script at every width and in both schemes: it is played
#: through (seconds of simulated frames per panel) once per layout, each in one of the
#: schemes, not at all four.
TIMELINE_CONFIGS = [
    (viewport, scheme)
    for viewport, scheme in zip(VIEWPORTS, ("dark", "light"), strict=False)
]


def test_every_panel_has_a_page() -> None:
    assert set(PAGE_OF) == set(PANELS) == set(AXES)


@pytest.fixture(params=[False, True], ids=["motion", "reduced-motion"])
def reduced(request: pytest.FixtureRequest) -> bool:
    return request.param


def recorded_page(context):  # type: ignore[no-untyped-def]
    """A new page of ``context`` that collects console errors and uncaught exceptions in
    ``console_errors``."""
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.console_errors = errors
    return page


def wait_for_panels(page, chapter: str) -> None:  # type: ignore[no-untyped-def]
    """Wait until every panel of ``chapter`` has its player."""
    names = [n for n, c in PAGE_OF.items() if c == chapter]
    page.wait_for_function(
        f"() => {names}.every(n => document.getElementById('panel-' + n).bookPanel)",
        timeout=15000,
    )


def _open(
    browser, site_dir: Path, name: str, reduced_motion: bool = False
) -> Iterator[object]:  # type: ignore[no-untyped-def]
    context = new_context(
        browser,
        viewport={"width": 1280, "height": 900},
        reduced_motion="reduce" if reduced_motion else "no-preference",
    )
    page = recorded_page(context)
    page.goto((site_dir / PAGE_OF[name]).as_uri())
    page.wait_for_function(
        f"() => document.getElementById('panel-{name}').bookPanel !== undefined",
        timeout=15000,
    )
    return context, page


@pytest.fixture(scope="module")
def desk(browser, site_dir: Path) -> Iterator[dict]:  # type: ignore[no-untyped-def]
    """Chapter page -> the page at 1280 px on the real clock, opened on first use and
    shared by the tests that drive or read one panel from its first beat (each through
    :func:`live`, which resets the panel first)."""
    context = new_context(browser, viewport={"width": 1280, "height": 900})

    def open_chapter(chapter: str) -> object:
        p = recorded_page(context)
        p.goto((site_dir / chapter).as_uri())
        wait_for_panels(p, chapter)
        return p

    yield FrontPages(open_chapter)
    context.close()


#: Puts a panel back as the page loaded it: paused on its first beat at 1x, its reading
#: pace and frame count restored, its transcript folded.
RESET = """(name) => {
  const r = document.getElementById('panel-' + name); const P = r.bookPanel;
  P.data.msPerWord = JSON.parse(r.querySelector('script.book-panel-data').textContent).msPerWord;
  P.speed = 1; P.speedMenu.value = '1'; P.seek(0); P.movingFrames = 0;
  r.querySelectorAll('details.book-panel-transcript').forEach(d => { d.open = false; });
  document.activeElement?.blur();
}"""  # noqa: E501  (JavaScript run in the page)


@pytest.fixture
def live(desk: dict, name: str) -> Iterator[object]:  # type: ignore[type-arg]
    """The page holding panel ``name`` (parametrized), the panel reset as loaded, with
    motion; a console error while the test runs fails it."""
    page = desk[PAGE_OF[name]]
    page.emulate_media(reduced_motion="no-preference")
    page.evaluate(RESET, name)
    before = len(page.console_errors)
    yield page
    assert page.console_errors[before:] == []


def attr(page, name: str, key: str) -> str:  # type: ignore[no-untyped-def]
    return page.get_attribute(f"#panel-{name}", f"data-{key}")


def embedded(page, name: str) -> dict:  # type: ignore[no-untyped-def]
    return json.loads(
        page.locator(f"#panel-{name} script.book-panel-data").text_content()
    )


class FrontPages(OnFirstUse):
    """Chapter page -> an open page of one context, opened on first use and brought to
    the front when asked for: a page behind another gets no animation frames, and
    Playwright's click waits for frames (it took a second a click)."""

    def __getitem__(self, chapter: str) -> object:
        page = super().__getitem__(chapter)  # opens it (``__missing__``) on first use
        page.bring_to_front()
        return page


# ---- one page per chapter, width and colour scheme, on a fake clock (shared by the
# tests below) -----------------


@pytest.fixture(
    params=CONFIGS,
    ids=[f"{VIEWPORTS[v]['width']}px-{s}" for v, s in CONFIGS],
    scope="module",
)
def config(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param


@pytest.fixture(scope="module")
def opened(browser, site_dir: Path) -> Iterator[dict]:  # type: ignore[no-untyped-def]
    """(width, scheme) -> chapter page -> the page opened at that width and scheme, each
    opened on first use and kept for the module. Time is a paused fake clock: nothing
    happens until a test runs it (``page.clock.run_for``). Keyed by the configuration
    rather than built per ``config`` parameter: a test that parametrizes ``config``
    itself (the timeline tests) would otherwise be handed the module's pages of whatever
    configuration was open (seen: the 1280 px timeline played on 390 px pages)."""
    contexts: dict[tuple[str, str], object] = {}

    def open_config(config: tuple[str, str]) -> FrontPages:
        viewport, scheme = config
        context = contexts[config] = new_context(
            browser, viewport=VIEWPORTS[viewport], scheme=scheme
        )

        def open_chapter(chapter: str) -> object:
            p = recorded_page(context)
            p.clock.install()
            open_page(p, site_dir, chapter)
            p.clock.pause_at(p.evaluate("() => Date.now()") + 1000)
            p.clock.run_for(500)
            wait_for_panels(p, chapter)
            assert p.evaluate("() => document.documentElement.dataset.theme") == scheme
            return p

        return FrontPages(open_chapter)

    configs = OnFirstUse(open_config)
    yield configs
    for pages_of_config in configs.values():
        for p in pages_of_config.values():
            assert p.console_errors == []
    for context in contexts.values():
        context.close()


@pytest.fixture
def pages(opened: dict, config: tuple[str, str]) -> dict:  # type: ignore[type-arg]
    """Chapter page -> the page opened at this test's width and scheme
    (:func:`opened`)."""
    return opened[tuple(config)]


def shown_as(page) -> tuple[str, int]:  # type: ignore[no-untyped-def]
    """The theme a page shows and its window's width."""
    return tuple(
        page.evaluate(
            "() => [document.documentElement.dataset.theme, window.innerWidth]"
        )
    )


def player(pages: dict, name: str) -> object:  # type: ignore[type-arg]
    """The page holding panel ``name``, with its player paused on the first beat, as a
    reader finds it."""
    page = pages[PAGE_OF[name]]
    page.evaluate(
        f"() => {{ const P = document.getElementById('panel-{name}').bookPanel; "
        "P.speed = 1; P.speedMenu.value = '1'; P.seek(0); }"
    )
    return page


@pytest.mark.parametrize("name", list(PANELS))
def test_panel_opens_paused_on_its_first_beat_and_waits(
    pages, config, name: str
) -> None:  # type: ignore[no-untyped-def]
    page = pages[PAGE_OF[name]]
    panel = page.locator(f"#panel-{name}")
    data = embedded(page, name)
    assert attr(page, name, "playing") == "false"
    # the first beat: a prompt to predict is not answered by the picture
    assert attr(page, name, "beat") == "0"
    page.clock.run_for(120_000)  # two minutes without the reader: nothing moves on
    assert (attr(page, name, "beat"), attr(page, name, "playing")) == ("0", "false")
    # the static figure gave way to the live one
    assert panel.locator("noscript, .book-panel-static").count() == 0
    assert (
        page.evaluate(
            "() => performance.getEntriesByType('resource').filter(r => "
            f"r.name.includes('{name}.png')).length"
        )
        == 0
    )  # and was not downloaded
    assert panel.locator(".book-panel-stage svg *").count() > 5  # something drawn
    assert (
        narration(page, name)
        == f"Beat 1 of {len(data['beats'])}. {untex(data['beats'][0]['text'])}"
    )


@pytest.mark.parametrize("name", list(PANELS))
def test_a_beat_advances_when_the_reader_steps_it(pages, config, name: str) -> None:  # type: ignore[no-untyped-def]
    page = player(pages, name)
    beats = embedded(page, name)["beats"]
    root = f"#panel-{name}"
    assert page.get_attribute(f"{root} .book-panel-back", "aria-disabled") == "true"
    page.click(f"{root} .book-panel-next")
    assert attr(page, name, "beat") == "1"
    assert narration(page, name).endswith(untex(beats[1]["text"]))
    page.clock.run_for(60_000)
    assert attr(page, name, "beat") == "1"  # stepping does not start the timeline
    page.focus(f"{root} .book-panel-stage")
    page.keyboard.press("ArrowRight")
    assert attr(page, name, "beat") == "2"
    page.click(f"{root} .book-panel-back")
    assert attr(page, name, "beat") == "1"
    page.focus(f"{root} .book-panel-stage")
    page.keyboard.press("End")
    assert page.get_attribute(f"{root} .book-panel-next", "aria-disabled") == "true"
    # aria-disabled, yet it may be pressed: nothing follows
    page.click(f"{root} .book-panel-next", force=True)
    assert attr(page, name, "beat") == str(len(beats) - 1)


# The times at which the drawn beat changes, on the page's (fake) clock.
RECORD_BEATS = """(name) => {
  const r = document.getElementById('panel-' + name);
  r.beatTimes = [[r.dataset.beat, performance.now()]];
  if (!r.beatWatch) {
    r.beatWatch = new MutationObserver(() => {
      const last = r.beatTimes[r.beatTimes.length - 1];
      if (r.dataset.beat !== last[0]) { r.beatTimes.push([r.dataset.beat, performance.now()]); }
    });
    r.beatWatch.observe(r, { attributes: true, attributeFilter: ['data-beat'] });
  }
}"""  # noqa: E501  (JavaScript run in the page)


def beat_times(page, name: str, speed: float, run_ms: float) -> list[list]:  # type: ignore[no-untyped-def]
    """Play panel ``name`` from its first beat at ``speed`` for ``run_ms`` of the page's
    clock; return [beat, time] at each change of the beat drawn, from the press of
    Play."""
    page.evaluate(f"() => document.getElementById('panel-{name}').bookPanel.seek(0)")
    page.select_option(f"#panel-{name}-speed", str(speed))
    page.evaluate(RECORD_BEATS, name)
    page.click(f"#panel-{name} .book-panel-play")
    page.clock.run_for(int(run_ms))
    times = page.evaluate(f"() => document.getElementById('panel-{name}').beatTimes")
    page.evaluate(f"() => document.getElementById('panel-{name}').bookPanel.seek(0)")
    return times


@pytest.mark.parametrize(
    "config",
    TIMELINE_CONFIGS,
    scope="module",
    ids=[f"{VIEWPORTS[v]['width']}px-{s}" for v, s in TIMELINE_CONFIGS],
)
@pytest.mark.parametrize("name", list(PANELS))
def test_playing_holds_each_beat_in_proportion_to_its_words(
    pages, config, name: str
) -> None:  # type: ignore[no-untyped-def]
    page = player(pages, name)
    assert shown_as(page) == (config[1], VIEWPORTS[config[0]]["width"]), (
        "played on a page of another configuration"
    )
    data = embedded(page, name)
    beats = panel_data.panel(name)["beats"]
    words = [b["words"] for b in beats]
    assert (
        words
        == [reading_words(b["text"]) for b in beats]
        == [b["words"] for b in data["beats"]]
    )
    per_word, move = data["msPerWord"], data["moveMs"]
    # at most 240 words a minute at 1x: a beat of 52 words stays 13 s or more
    assert per_word >= 250
    # Every beat drawn finished (reduced motion), so that the clock runs through the
    # whole timeline without frames.
    page.emulate_media(reduced_motion="reduce")
    try:
        for speed in (1, 0.5):
            times = beat_times(
                page, name, speed, sum(w * per_word for w in words) / speed + 1000
            )
            # every beat, in order, once
            assert [int(b) for b, _ in times] == list(range(len(beats))), times
            # how long each beat but the last stayed
            held = [b - a for (_, a), (_, b) in itertools.pairwise(times)]
            for i, t in enumerate(held):
                assert t == pytest.approx(
                    words[i] * per_word / speed, abs=CLOCK_TOL_MS
                ), (speed, i, words[i], t)
    finally:
        page.emulate_media(reduced_motion="no-preference")
    # With motion, the move into a beat comes first, then the beat is held as long.
    times = beat_times(
        page, name, 2, (words[0] * per_word + move + words[1] * per_word) / 2 + 100
    )
    assert [int(b) for b, _ in times][:3] == [0, 1, 2]
    assert times[2][1] - times[1][1] == pytest.approx(
        (move + words[1] * per_word) / 2, abs=CLOCK_TOL_MS
    )
    assert attr(page, name, "playing") == "false"


# Every text of a panel, drawing included, with its size in CSS px; the layout drawn and
# the stage's width.
SIZES = """([name, MIN]) => {
  const root = document.getElementById('panel-' + name);
  const stage = root.querySelector('.book-panel-stage');
  const svg = stage.querySelector('svg');
  const scale = svg.getScreenCTM().a;
  const small = [];
  svg.querySelectorAll('text:not(.halo), text:not(.halo) tspan').forEach(e => {
    const px = parseFloat(getComputedStyle(e).fontSize) * scale;
    if (e.textContent.trim() && px < MIN) { small.push([e.textContent, px]); }
  });
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const el = walker.currentNode.parentElement;
    if (!walker.currentNode.textContent.trim() || el.closest('svg, script, noscript, mjx-assistive-mml')
        || !el.getClientRects().length) { continue; }
    const px = parseFloat(getComputedStyle(el).fontSize);
    if (px < MIN) { small.push([walker.currentNode.textContent.trim().slice(0, 50), px]); }
  }
  return { small, layout: root.dataset.layout, viewBox: svg.viewBox.baseVal.width, stage: stage.clientWidth,
           svg: svg.getBoundingClientRect().width, overflow: root.scrollWidth > root.clientWidth + 1 };
}"""  # noqa: E501  (JavaScript run in the page)


@pytest.mark.parametrize("name", list(PANELS))
def test_narrow_layout_below_600_px_and_no_text_under_12_px(
    pages, config, name: str
) -> None:  # type: ignore[no-untyped-def]
    page = player(pages, name)
    page.evaluate(
        f"() => document.querySelectorAll('#panel-{name} details').forEach(d => {{ "
        "d.open = true; })"
    )
    try:
        for i in range(len(embedded(page, name)["beats"])):
            page.evaluate(
                f"() => document.getElementById('panel-{name}').bookPanel.seek({i})"
            )
            got = page.evaluate(SIZES, [name, MIN_TEXT_PX])
            assert got["small"] == [], (
                f"{name}, beat {i + 1}: text under {MIN_TEXT_PX} px: {got['small']}"
            )
            assert not got["overflow"], f"{name}: the panel is wider than its box"
            assert got["svg"] <= got["stage"] + 0.5
            if got["stage"] < NARROW_BELOW:
                assert got["layout"] == "narrow"
                # a unit of the drawing is a CSS pixel
                assert got["viewBox"] == int(got["stage"])
            else:
                assert got["layout"] == "wide"
            assert (got["layout"] == "narrow") == (config[0] == "phone")
    finally:
        page.evaluate(
            f"() => document.querySelectorAll('#panel-{name} details').forEach(d => {{ "
            "d.open = false; })"
        )


# Labels of the drawing (the text elements, not their halos) that overlap each other or
# leave the drawing.
COLLISIONS = """(name) => {
  const svg = document.querySelector('#panel-' + name + ' .book-panel-stage svg');
  const r = svg.getBoundingClientRect();
  const boxes = Array.from(svg.querySelectorAll('text:not(.halo)')).filter(t => t.textContent.trim())
    .map(t => ({ t: t.textContent, b: t.getBoundingClientRect() }));
  const problems = [];
  boxes.forEach(({ t, b }, i) => {
    if (b.left < r.left - 0.5 || b.top < r.top - 0.5 || b.right > r.right + 0.5 || b.bottom > r.bottom + 0.5) {
      problems.push(`'${t}' leaves the drawing`);
    }
    for (const o of boxes.slice(i + 1)) {
      const x = Math.min(b.right, o.b.right) - Math.max(b.left, o.b.left);
      const y = Math.min(b.bottom, o.b.bottom) - Math.max(b.top, o.b.top);
      if (x > 0.5 && y > 0.5) { problems.push(`'${t}' overlaps '${o.t}'`); }
    }
  });
  return problems;
}"""  # noqa: E501  (JavaScript run in the page)


def drawn_states(page, name: str) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """Put the panel in each state a reader can reach: every beat, each half-way from
    the one before, and every corner of its sliders (min and max of each, on the first
    beat); yield what it is."""
    data = embedded(page, name)
    set_state = (
        "([name, i, progress, override]) => { const P = "
        "document.getElementById('panel-' + name).bookPanel; P.pause(); P.index = i; "
        "P.progress = progress; P.override = override; P.render(); }"
    )
    for i in range(len(data["beats"])):
        for progress in [0.5, 1] if i else [1]:
            page.evaluate(set_state, [name, i, progress, None])
            yield f"beat {i + 1}" + (" half-way" if progress < 1 else "")
    controls = data["controls"]
    for corner in (
        itertools.product(*[(c["min"], c["max"]) for c in controls]) if controls else []
    ):
        override = {
            **data["beats"][0]["state"],
            **{c["id"]: v for c, v in zip(controls, corner, strict=True)},
        }
        page.evaluate(set_state, [name, 0, 1, override])
        yield f"sliders at {override}"
    page.evaluate(f"() => document.getElementById('panel-{name}').bookPanel.seek(0)")


@pytest.mark.parametrize("name", list(PANELS))
def test_labels_never_collide(pages, config, name: str) -> None:  # type: ignore[no-untyped-def]
    page = player(pages, name)
    for state in drawn_states(page, name):
        problems = page.evaluate(COLLISIONS, name)
        assert problems == [], f"{name} at {state}: {problems}"


# The axes drawn (data-axis of the axis lines) and the text of the labels that name
# them.
AXIS_LABELS = """(name) => {
  const svg = document.querySelector('#panel-' + name + ' .book-panel-stage svg');
  const axes = Array.from(svg.querySelectorAll('.book-panel-axis')).map(a => a.dataset.axis);
  const labels = {};
  svg.querySelectorAll('text.book-panel-axis-label').forEach(t => {
    (labels[t.dataset.axis] = labels[t.dataset.axis] || []).push(t.textContent.trim());
  });
  return { axes, labels };
}"""  # noqa: E501  (JavaScript run in the page)


@pytest.mark.parametrize("name", list(PANELS))
def test_every_axis_has_a_label(pages, config, name: str) -> None:  # type: ignore[no-untyped-def]
    page = player(pages, name)
    for state in drawn_states(page, name):
        got = page.evaluate(AXIS_LABELS, name)
        assert set(got["axes"]) == AXES[name], f"{name} at {state}: axes {got['axes']}"
        assert sorted(got["labels"]) == sorted(set(got["axes"])), (
            f"{name} at {state}: labels {got['labels']}"
        )
        assert all(
            len(texts) == 1 and len(texts[0]) > 2 for texts in got["labels"].values()
        ), got["labels"]


def untex(text: str) -> str:
    """A panel's text as the tests read it off a page: each formula as its TeX source,
    without the dollars."""
    return text.replace("$", "")


# The text of an element with each typeset formula read as its TeX (the data-tex of its
# wrapper), and the formulas that are not typeset with MathJax's SVG and its MathML for
# screen readers.
READ = """(el) => {
  const copy = el.cloneNode(true);
  const untypeset = [];
  copy.querySelectorAll('.book-panel-tex').forEach(w => {
    const ok = w.querySelector('mjx-container > svg') && w.querySelector('mjx-assistive-mml > math');
    if (!ok) { untypeset.push(w.dataset.tex); }
    w.replaceWith(document.createTextNode(w.dataset.tex));
  });
  copy.querySelectorAll('mjx-container').forEach(m => m.replaceWith(document.createTextNode('\u00a7')));
  return { text: copy.textContent.replace(/\\s+/g, ' ').trim(), untypeset };
}"""  # noqa: E501  (JavaScript run in the page)


def read(page, selector: str) -> dict:  # type: ignore[no-untyped-def]
    return page.locator(selector).evaluate(READ)


def narration(page, name: str) -> str:  # type: ignore[no-untyped-def]
    got = read(page, f"#panel-{name} .book-panel-now")
    assert got["untypeset"] == []
    return got["text"]


@pytest.mark.parametrize("name", list(PANELS))
def test_math_in_titles_and_narration_is_typeset_like_the_book(
    pages, config, name: str
) -> None:  # type: ignore[no-untyped-def]
    page = player(pages, name)
    data = panel_data.panel(name)
    root = f"#panel-{name}"
    for selector, text in [
        (".book-panel-title", data["title"]),
        (".book-panel-summary", data["summary"]),
    ]:
        got = read(page, f"{root} {selector}")
        assert got == {"text": untex(text), "untypeset": []}, selector
        assert (
            page.locator(f"{root} {selector} .book-panel-tex").count()
            == text.count("$") // 2
        )
    for i, beat in enumerate(data["beats"]):
        page.evaluate(
            f"() => document.getElementById('panel-{name}').bookPanel.seek({i})"
        )
        assert (
            narration(page, name)
            == f"Beat {i + 1} of {len(data['beats'])}. {untex(beat['text'])}"
        )
        assert (
            page.locator(f"{root} .book-panel-now .book-panel-tex").count()
            == beat["text"].count("$") // 2
        )
    # a symbol in a slider's label is the page's typeset symbol too
    for control in data["controls"]:
        label = page.locator(f"label[for='panel-{name}-{control['id']}']")
        symbols = control["label"].count("{")
        assert label.locator("mjx-container > svg").count() == symbols
        assert "{" not in label.evaluate(READ)["text"]
    drawn = page.locator(f"{root} .book-panel-stage svg").text_content()
    assert not set("$\\^_{}") & set(drawn), (
        f"TeX source shows in the drawing: {drawn!r}"
    )
    for state in drawn_states(page, name):
        drawn = page.locator(f"{root} .book-panel-stage svg").text_content()
        assert not set("$\\^_{}") & set(drawn), (
            f"{name} at {state}: TeX source shows in the drawing: {drawn!r}"
        )


def test_the_drawing_redraws_narrow_when_the_window_narrows(
    browser, site_dir: Path
) -> None:  # type: ignore[no-untyped-def]
    context, page = _open(browser, site_dir, "keep-dial")
    try:
        names = [n for n, c in PAGE_OF.items() if c == PAGE_OF["keep-dial"]]
        layouts = (
            f"() => {names}.map(n => document.getElementById('panel-' + "
            "n).dataset.layout)"
        )
        assert set(page.evaluate(layouts)) == {"wide"}
        page.set_viewport_size(VIEWPORTS["phone"])
        page.wait_for_function(
            f"() => ({layouts})().every(l => l === 'narrow')", timeout=5000
        )
        page.set_viewport_size(VIEWPORTS["desktop"])
        page.wait_for_function(
            f"() => ({layouts})().every(l => l === 'wide')", timeout=5000
        )
        assert page.console_errors == []
    finally:
        context.close()


@pytest.mark.parametrize("name", list(PANELS))
def test_keyboard_alone_reaches_every_beat_and_control(live, name: str) -> None:  # type: ignore[no-untyped-def]
    _drive_by_keyboard(live, name)


def _drive_by_keyboard(page, name: str) -> None:  # type: ignore[no-untyped-def]
    data = embedded(page, name)
    n = len(data["beats"])
    root = f"#panel-{name}"
    # Reach the drawing by Tab from the panel's title, as a keyboard reader moving down
    # the page would.
    page.evaluate(
        f"() => {{ const t = document.querySelector('{root} .book-panel-title'); "
        "t.tabIndex = -1; t.focus(); }"
    )
    page.keyboard.press("Tab")
    assert page.evaluate(
        "() => document.activeElement.classList.contains('book-panel-stage')"
    )
    outline = page.evaluate(
        "() => getComputedStyle(document.activeElement).outlineStyle"
    )
    assert outline != "none", "the focused drawing shows no focus outline"
    page.keyboard.press("Home")
    seen = [int(attr(page, name, "beat"))]
    for _ in range(n - 1):
        page.keyboard.press("ArrowRight")
        seen.append(int(attr(page, name, "beat")))
        assert narration(page, name).endswith(untex(data["beats"][seen[-1]]["text"]))
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

    # Tab on through the controls: Back, Next, Play, the scrubber, the speed menu, then
    # each parameter slider.
    reached = []
    for _ in range(6 + len(data["controls"])):
        page.keyboard.press("Tab")
        reached.append(
            page.evaluate(
                "() => document.activeElement.id || document.activeElement.className"
            )
        )
    controls = [f"panel-{name}-{c['id']}" for c in data["controls"]]
    assert {"book-panel-back", "book-panel-next", "book-panel-play"} <= set(reached)
    assert f"panel-{name}-beat" in reached
    assert f"panel-{name}-speed" in reached
    assert set(controls) <= set(reached), (
        f"controls not reached by Tab: {set(controls) - set(reached)}"
    )

    page.focus(f"#panel-{name}-beat")
    page.keyboard.press("Home")
    assert attr(page, name, "beat") == "0"
    page.keyboard.press("ArrowRight")
    assert attr(page, name, "beat") == "1"
    page.focus(f"#panel-{name}-speed")
    page.keyboard.press("ArrowDown")
    assert (
        page.evaluate(f"() => document.querySelector('{root}').bookPanel.speed") == 1.5
    )
    page.focus(f"{root} .book-panel-play")
    page.keyboard.press("Enter")
    assert attr(page, name, "playing") == "true"
    for control in data["controls"]:
        before = page.inner_html(f"{root} .book-panel-stage svg")
        slider = f"#panel-{name}-{control['id']}"
        page.focus(slider)
        at_max = page.evaluate(
            f"() => {{ const i = document.querySelector('{slider}'); return +i.value "
            ">= +i.max; }"
        )
        # pauses and recomputes the picture
        page.keyboard.press("ArrowLeft" if at_max else "ArrowRight")
        assert attr(page, name, "playing") == "false"
        assert page.inner_html(f"{root} .book-panel-stage svg") != before
        assert "Your setting" in page.locator(f"{root} .book-panel-now").text_content()


@pytest.mark.parametrize(
    "config",
    TIMELINE_CONFIGS[:1],
    scope="module",
    ids=[f"{VIEWPORTS[v]['width']}px-{s}" for v, s in TIMELINE_CONFIGS[:1]],
)
@pytest.mark.parametrize("name", list(PANELS))
def test_reduced_motion_shows_finished_beats_only(
    pages, config, name: str, reduced: bool
) -> None:  # type: ignore[no-untyped-def]
    """Played through two beats on the page's fake clock (its animation frames
    included), at 1280 px."""
    page, root = player(pages, name), f"#panel-{name}"
    assert shown_as(page) == (config[1], VIEWPORTS[config[0]]["width"]), (
        "played on a page of another configuration"
    )
    data = embedded(page, name)
    words = [b["words"] for b in data["beats"]]
    # the player asks at every move
    page.emulate_media(reduced_motion="reduce" if reduced else "no-preference")
    try:
        page.evaluate(
            f"() => {{ const r = document.querySelector('{root}'); r.seenProgress = "
            "[]; if (r.progressWatch) r.progressWatch.disconnect(); r.progressWatch = "
            "new MutationObserver(() => r.seenProgress.push(r.dataset.progress)); "
            "r.progressWatch.observe(r, {attributes: true, attributeFilter: "
            "['data-progress', 'data-beat']});"
            # a fast reader (40 ms a word) at twice the speed, so that two beats pass in
            # a few seconds of the clock
            " r.bookPanel.data.msPerWord = 40; r.bookPanel.speed = 2; "
            "r.bookPanel.movingFrames = 0; r.bookPanel.seek(0); r.bookPanel.play(); }"
        )
        # the first two beats held and the two moves made, then 100 ms into the third
        # beat
        page.clock.run_for(
            int((40 * (words[0] + words[1]) + 2 * data["moveMs"]) / 2) + 100
        )
        assert int(attr(page, name, "beat")) >= 2
        frames = page.evaluate(
            f"() => document.querySelector('{root}').bookPanel.movingFrames"
        )
        progress = page.evaluate(f"() => document.querySelector('{root}').seenProgress")
        page.evaluate(
            f"() => document.querySelector('{root}').progressWatch.disconnect()"
        )
    finally:
        page.evaluate(f"() => document.querySelector('{root}').bookPanel.pause()")
        page.evaluate(RESET, name)
        page.emulate_media(reduced_motion="no-preference")
    if reduced:
        assert frames == 0
        assert set(progress) == {"1"}, (
            "a state between two beats was drawn under reduced motion"
        )
    else:
        assert frames > 0
        assert any(p != "1" for p in progress)


def test_a_page_loaded_under_reduced_motion_draws_no_frame_between_beats(
    browser, site_dir: Path
) -> None:  # type: ignore[no-untyped-def]
    """The shared pages switch the preference after loading; one page is also loaded
    with it set."""
    context, page = _open(browser, site_dir, "forget-power", reduced_motion=True)
    try:
        page.evaluate(
            "() => { const P = "
            "document.getElementById('panel-forget-power').bookPanel; P.data.msPerWord "
            "= 40; P.speed = 2; P.seek(0); P.play(); }"
        )
        page.wait_for_function(
            "() => document.getElementById('panel-forget-power').dataset.beat === '2'",
            timeout=15000,
            polling=50,
        )
        assert (
            page.evaluate(
                "() => "
                "document.getElementById('panel-forget-power').bookPanel.movingFrames"
            )
            == 0
        )
        assert page.console_errors == []
    finally:
        context.close()


@pytest.mark.parametrize("name", list(PANELS))
def test_transcript_has_one_entry_per_beat(live, name: str) -> None:  # type: ignore[no-untyped-def]
    page = live
    beats = panel_data.panel(name)["beats"]
    items = page.locator(f"#panel-{name} details.book-panel-transcript li")
    assert items.count() == len(beats) == len(embedded(page, name)["beats"])
    assert [i.evaluate(READ) for i in items.all()] == [
        {"text": untex(b["text"]), "untypeset": []} for b in beats
    ]
    assert not items.first.is_visible()  # folded until asked for
    page.locator(f"#panel-{name} details.book-panel-transcript summary").focus()
    page.keyboard.press("Enter")  # the transcript opens from the keyboard
    assert items.first.is_visible()


JS_CASES = {
    "one-unit": (
        [
            {"w": w, "x": x}
            for w in (-2.5, -0.7, 0.3, 1.05, 2.2)
            for x in (-0.6, 0.0, 0.35)
        ],
        lambda p: bptt_panels.one_unit_curves(p["w"], p["x"]),
    ),
    "forget-power": (
        [{"b": b} for b in (-3.0, -1.3, 0.0, 0.55, 1.0, 2.7, 4.95)],
        lambda p: {"curve": gated_panels.forget_curve(p["b"])},
    ),
    "keep-dial": (
        [{"u": u} for u in (0.0, 0.13, 0.5, 0.77, 1.0)],
        lambda p: gated_panels.dial_parts(p["u"]),
    ),
    # k = 2.4 is a value between two beats while the animation moves: the JavaScript
    # snaps it to the count 2
    "sampling-explorer": (
        [
            {"tau": t, "k": k, "p": p}
            for t in (0.1, 0.35, 1.0, 1.65, 3.95)
            for k in (1, 2.4, 4, 6)
            for p in (0.05, 0.5, 0.9, 0.97, 1.0)
        ],
        lambda p: sampling_panels.sampling_parts(p["tau"], round(p["k"]), p["p"]),
    ),
}


@pytest.mark.parametrize("name", list(JS_CASES))
def test_javascript_numbers_match_python(live, name: str) -> None:  # type: ignore[no-untyped-def]
    params, python = JS_CASES[name]
    for p in params:
        got = live.evaluate(
            "([name, p]) => { const d = document.getElementById('panel-' + "
            "name).bookPanel.data; const r = BookPanels.compute(name, p, d); return "
            "Array.isArray(r) ? {curve: r} : r; }",
            [name, p],
        )
        want = python(p)
        for key, value in want.items():
            got_v = got[key]
            if isinstance(value, list):
                assert len(got_v) == len(value)
                for a, b in zip(got_v, value, strict=True):
                    assert a == pytest.approx(b, rel=JS_REL_TOL, abs=1e-300), (
                        name,
                        p,
                        key,
                    )
            else:
                assert got_v == pytest.approx(value, rel=JS_REL_TOL, abs=1e-15), (
                    name,
                    p,
                    key,
                )


@pytest.fixture(scope="module")
def static_pages(browser, site_dir: Path) -> Iterator[dict]:  # type: ignore[no-untyped-def]
    """Chapter page -> the page at 390 px with JavaScript off, opened on first use (read
    only)."""
    context = browser.new_context(
        java_script_enabled=False, viewport={"width": 390, "height": 844}
    )

    def open_chapter(chapter: str) -> object:
        p = context.new_page()
        p.goto((site_dir / chapter).as_uri())
        return p

    yield FrontPages(open_chapter)
    context.close()


@pytest.mark.parametrize("name", list(PANELS))
def test_without_javascript_the_static_figure_and_transcript_stand(
    static_pages: dict, name: str
) -> None:  # type: ignore[type-arg]
    page = static_pages[PAGE_OF[name]]
    img = page.locator(f"#panel-{name} .book-panel-static img")
    img.scroll_into_view_if_needed()
    page.wait_for_function(
        "(i) => i.complete && i.naturalWidth > 0",
        arg=img.element_handle(),
        timeout=10000,
    )
    assert img.is_visible()
    assert img.get_attribute("alt")
    beats = len(panel_data.panel(name)["beats"])
    assert (
        page.locator(f"#panel-{name} details.book-panel-transcript li").count() == beats
    )
    assert page.locator(f"#panel-{name} .book-panel-stage").count() == 0


@pytest.mark.parametrize("name", ["keep-dial"])
def test_javascript_prints_numbers_as_python_does(live, name: str) -> None:  # type: ignore[no-untyped-def]
    values = [
        0.0,
        0.35,
        0.5334,
        -0.0098,
        1e-3,
        9.99e-4,
        2.6e-4,
        4.2e-18,
        9999.0,
        1e4,
        -1.15e18,
        3.1e-73,
    ]
    for digits in (1, 2, 3):
        got = live.evaluate(
            "([vs, d]) => vs.map((v) => BookPanels.number(v, d))", [values, digits]
        )
        assert got == [panel_beats.number(v, digits) for v in values], digits


@pytest.mark.parametrize("name", ["sampling-explorer"])
def test_a_count_moving_between_beats_is_drawn_and_shown_whole(live, name: str) -> None:  # type: ignore[no-untyped-def]
    beats = panel_data.panel(name)["beats"]
    move = next(
        i
        for i in range(1, len(beats))
        if beats[i]["state"]["k"] != beats[i - 1]["state"]["k"]
    )
    k_from, k_to = beats[move - 1]["state"]["k"], beats[move]["state"]["k"]
    shown = live.evaluate(
        "(i) => { const r = document.getElementById('panel-sampling-explorer'); const "
        "P = r.bookPanel; P.index = i; P.progress = 0.4; P.render(); return "
        "[r.querySelector('output[for=\"panel-sampling-explorer-k\"]').textContent, "
        "r.querySelector('.book-panel-stage svg').textContent]; }",
        move,
    )
    live.evaluate(RESET, name)
    k = round(k_from + (k_to - k_from) * 0.4)
    assert shown[0] == str(k)
    assert f"top-k, k = {k}: {k} kept" in shown[1]
