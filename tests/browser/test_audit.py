"""The built site held to a standard: axe-core on every page at desktop and phone widths, the Nu HTML validator.

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

#: Moderate or minor axe findings accepted, rule id -> reason. Critical and serious ones cannot be accepted.
AXE_ACCEPTED = {
    "region": "pydata-sphinx-theme puts the book's title (a link home) at the top of the sidebar outside any "
    "landmark; everything else on the page is inside one",
}

#: Nu validator errors accepted, message fragment -> reason (the themes' own markup only). None at present:
#: bookbuild/site/a11y.py repairs what the themes, myst-nb and docutils wrote.
VNU_ACCEPTED: dict[str, str] = {}

ALL_PAGES = ["index.html", *PAGES]


def tool(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path.relative_to(NODE_TOOLS.parent.parent)} is not installed: `make browser-tools` "
                    "(run by `make test`) installs the pinned npm packages")
    return path


@pytest.mark.parametrize("name", PAGES)  # index.html only redirects to the first page (validated below)
def test_axe_finds_no_serious_violation(shared_loads, viewport: str, name: str) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    axe = tool(AXE_JS).read_text(encoding="utf-8")
    page = shared_loads.reading(name, viewport)  # the load test_pages.py's render check then reads (and unfolds)
    page.wait_for_timeout(400)  # the theme's scripts settle (scrollable regions get their tab stops after 300 ms)
    page.add_script_tag(content=axe)
    result = page.evaluate(
        "tags => axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']})", AXE_TAGS
    )
    failing, accepted = [], []
    for v in result["violations"]:
        targets = [" ".join(map(str, n["target"])) for n in v["nodes"]]
        line = f"{v['impact']} {v['id']} ({v['help']}) on {len(targets)} element(s): {targets[:4]}"
        if v["impact"] in FAILING_IMPACTS or v["id"] not in AXE_ACCEPTED:
            failing.append(line)
        else:
            accepted.append(f"{line}; accepted: {AXE_ACCEPTED[v['id']]}")
    for line in accepted:
        # a built-in category: xdist's controller must be able to import a warning's class by name
        warnings.warn(f"accepted axe finding: {name} at {viewport}: {line}", UserWarning, stacklevel=1)
    assert failing == [], f"{name} at {viewport}, axe-core {result['testEngine']['version']}:\n" + "\n".join(failing)


@pytest.fixture(scope="module")
def validator_messages(site_dir: Path) -> dict[str, list[str]]:
    """The Nu validator's errors for every page, run once (one Java start): page -> messages."""
    jar = tool(VNU_JAR)
    java = shutil.which("java")
    if java is None:
        pytest.skip("no Java to run the Nu HTML validator (Debian: default-jre-headless)")
    files = [str(site_dir / name) for name in ALL_PAGES]
    proc = subprocess.run([java, "-jar", str(jar), "--errors-only", "--format", "json", *files],
                          capture_output=True, text=True, timeout=300)
    report = json.loads(proc.stderr or proc.stdout)
    messages: dict[str, list[str]] = {name: [] for name in ALL_PAGES}
    for m in report["messages"]:
        if m.get("type") != "error" and m.get("subType") != "fatal":
            continue
        name = Path(m["url"].removeprefix("file:")).relative_to(site_dir).as_posix()
        messages.setdefault(name, []).append(f"line {m.get('lastLine', '?')}: {m['message']}")
    return messages


@pytest.mark.xdist_group("nu-validator")  # one worker: the validator (a Java start, about 15 s) runs once
@pytest.mark.parametrize("name", ALL_PAGES)
def test_nu_validator_reports_no_errors(validator_messages: dict[str, list[str]], name: str) -> None:
    errors = [m for m in validator_messages[name] if not any(a in m for a in VNU_ACCEPTED)]
    assert errors == [], f"{name}: {len(errors)} validator error(s):\n" + "\n".join(errors[:20])
