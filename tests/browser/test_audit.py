"""The built site held to a standard: axe-core on every page at desktop and phone
widths, the Nu HTML validator.

Both tools come from npm, pinned in ``tests/browser/node/package.json`` and its
lock, and installed into ``tests/browser/node/node_modules`` by ``make test``
(``make browser-tools``); they are never part of the site. axe-core is injected
into the page under test; the validator is ``vnu.jar`` run by the machine's Java.

axe: any critical or serious violation fails. A moderate or minor one fails too
unless it is in :data:`AXE_ACCEPTED` below, with its reason; accepted findings
are listed in the warnings summary of the test run.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import warnings
from pathlib import Path

import pytest

from tests.browser.test_pages import PAGES, VIEWPORTS, viewport  # noqa: F401  (the fixture shared with test_pages)

NODE_TOOLS = Path(__file__).with_name("node") / "node_modules"
AXE_JS = NODE_TOOLS / "axe-core" / "axe.min.js"
VNU_JAR = NODE_TOOLS / "vnu-jar" / "build" / "dist" / "vnu.jar"
#: WCAG 2.0 and 2.1, levels A and AA, and axe's best practices.
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]
FAILING_IMPACTS = {"critical", "serious"}

#: Moderate or minor axe findings accepted, rule id -> reason. Critical and serious ones
#: cannot be accepted.
AXE_ACCEPTED = {
    "region": "pydata-sphinx-theme puts the book's title (a link home) at the top of "
    "the sidebar outside any "
    "landmark; everything else on the page is inside one",
}

#: Nu validator errors accepted, message fragment -> reason (the themes' own markup
#: only). None at present: bookbuild/site/a11y.py repairs what the themes, myst-nb and
#: docutils wrote.
VNU_ACCEPTED: dict[str, str] = {}

ALL_PAGES = ["index.html", *PAGES]


def tool(path: Path) -> Path:
    if not path.exists():
        pytest.skip(
            f"{path.relative_to(NODE_TOOLS.parent.parent)} is not installed: `make "
            "browser-tools` (run by `make test`) installs the pinned npm packages"
        )
    return path


# index.html only redirects to the first page (validated below)
@pytest.mark.parametrize("name", PAGES)
def test_axe_finds_no_serious_violation(shared_loads, viewport: str, name: str) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    axe = tool(AXE_JS).read_text(encoding="utf-8")
    # the load test_pages.py's render check then reads (and unfolds)
    page = shared_loads.reading(name, viewport)
    # the theme's scripts settle (scrollable regions get their tab stops after 300 ms)
    page.wait_for_timeout(400)
    page.add_script_tag(content=axe)
    # preload: false, since a file:// page cannot fetch its stylesheets (the CORS errors
    # in its console); the one rule that reads them, css-orientation-lock, is
    # test_no_stylesheet_locks_the_orientation below
    result = page.evaluate(
        "tags => axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: "
        "['violations'], preload: false})",
        AXE_TAGS,
    )
    failing, accepted = [], []
    for v in result["violations"]:
        targets = [" ".join(map(str, n["target"])) for n in v["nodes"]]
        line = (
            f"{v['impact']} {v['id']} ({v['help']}) on {len(targets)} element(s): "
            f"{targets[:4]}"
        )
        if v["impact"] in FAILING_IMPACTS or v["id"] not in AXE_ACCEPTED:
            failing.append(line)
        else:
            accepted.append(f"{line}; accepted: {AXE_ACCEPTED[v['id']]}")
    for line in accepted:
        # a built-in category: xdist's controller must be able to import a warning's
        # class by name
        warnings.warn(
            f"accepted axe finding: {name} at {viewport}: {line}",
            UserWarning,
            stacklevel=1,
        )
    assert failing == [], (
        f"{name} at {viewport}, axe-core {result['testEngine']['version']}:\n"
        + "\n".join(failing)
    )


#: An orientation media query (its condition) and the rules inside it.
ORIENTATION_QUERY = re.compile(r"@media[^{]*\borientation\s*:[^{]*\{")
ROTATION = re.compile(
    r"\btransform\s*:[^;}]*\b(rotate[XYZ3d]*|matrix3?d?)\s*\(", re.IGNORECASE
)


def orientation_locks(css: str) -> list[str]:
    """The orientation media queries of ``css`` that rotate anything: what axe-core's
    css-orientation-lock rule (WCAG 2.1, 1.3.4) looks for, a page turned to undo the
    device's orientation."""
    found = []
    for match in ORIENTATION_QUERY.finditer(css):
        depth, end = 1, match.end()
        while depth and end < len(css):
            depth += {"{": 1, "}": -1}.get(css[end], 0)
            end += 1
        if ROTATION.search(css[match.end() : end]):
            found.append(match.group(0).strip())
    return found


def test_the_orientation_check_finds_a_rotation_inside_an_orientation_query() -> None:
    locked = (
        "@media screen and (orientation: portrait) { html { transform: rotate(-90deg); "
        "} }"
    )
    assert orientation_locks(locked) == ["@media screen and (orientation: portrait) {"]
    outside = (
        "@media (orientation: landscape) { .a { margin: 0 } } .b { transform: "
        "rotate(1deg) }"
    )
    assert orientation_locks(outside) == []
    assert (
        orientation_locks(
            "@media (max-width: 600px) { .a { transform: rotate(90deg) } }"
        )
        == []
    )


def test_no_stylesheet_locks_the_orientation(site_dir: Path) -> None:
    """axe-core's css-orientation-lock rule, done here for every stylesheet of the site
    and every page's own ``<style>``: axe cannot read stylesheets from a page opened as
    a file."""
    sheets = {
        p.relative_to(site_dir).as_posix(): p.read_text(
            encoding="utf-8", errors="replace"
        )
        for p in site_dir.rglob("*.css")
    }
    for name in ALL_PAGES:
        html = (site_dir / name).read_text(encoding="utf-8")
        sheets[name] = "\n".join(
            re.findall(r"<style[^>]*>(.*?)</style>", html, re.DOTALL)
        )
    assert len(sheets) > len(ALL_PAGES)
    locks = {
        name: found for name, css in sheets.items() if (found := orientation_locks(css))
    }
    assert locks == {}, f"orientation locked (WCAG 1.3.4) by: {locks}"


@pytest.fixture(scope="module")
def validator_messages(site_dir: Path) -> dict[str, list[str]]:
    """The Nu validator's errors for every page, run once (one Java start): page ->
    messages."""
    jar = tool(VNU_JAR)
    java = shutil.which("java")
    if java is None:
        pytest.skip(
            "no Java to run the Nu HTML validator (Debian: default-jre-headless)"
        )
    files = [str(site_dir / name) for name in ALL_PAGES]
    proc = subprocess.run(
        [java, "-jar", str(jar), "--errors-only", "--format", "json", *files],
        capture_output=True,
        text=True,
        timeout=300,
    )
    report = json.loads(proc.stderr or proc.stdout)
    messages: dict[str, list[str]] = {name: [] for name in ALL_PAGES}
    for m in report["messages"]:
        if m.get("type") != "error" and m.get("subType") != "fatal":
            continue
        name = Path(m["url"].removeprefix("file:")).relative_to(site_dir).as_posix()
        messages.setdefault(name, []).append(
            f"line {m.get('lastLine', '?')}: {m['message']}"
        )
    return messages


# one worker: the validator (a Java start, about 15 s) runs once
@pytest.mark.xdist_group("nu-validator")
@pytest.mark.parametrize("name", ALL_PAGES)
def test_nu_validator_reports_no_errors(
    validator_messages: dict[str, list[str]], name: str
) -> None:
    errors = [
        m for m in validator_messages[name] if not any(a in m for a in VNU_ACCEPTED)
    ]
    assert errors == [], f"{name}: {len(errors)} validator error(s):\n" + "\n".join(
        errors[:20]
    )
