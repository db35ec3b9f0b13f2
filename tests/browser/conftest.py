"""Fixtures for the browser tests: a built site and Debian's Chromium driven by
Playwright.

The site comes from ``$BOOK_HTML_DIR`` when set (CI builds the book once and
points every consumer at it). Otherwise the first xdist worker to get here
builds a copy of the repository in a temporary folder, reusing the execution
cache that ``make check`` just filled (so Sphinx renders, nothing executes),
and the other workers wait for it.

The browser is Debian's ``chromium`` package (``make test`` installs it where
apt-get is available); ``$BOOK_CHROMIUM`` names another binary. Without one,
every browser test is skipped with the reason printed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from filelock import FileLock

from bookbuild.build import ROOT, copy_sources

CHROMIUM_CANDIDATES = [
    "/usr/lib/chromium/chromium",
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
]


def chromium_binary() -> str | None:
    """The Chromium executable to drive: ``$BOOK_CHROMIUM``, else Debian's package, else
    None."""
    wanted = os.environ.get("BOOK_CHROMIUM")
    if wanted:
        return wanted if Path(wanted).exists() else None
    return next((c for c in CHROMIUM_CANDIDATES if Path(c).exists()), None)


def _build_site(work: Path) -> Path:
    work.mkdir(parents=True, exist_ok=True)
    copy_sources(work)
    # what `make check` executed: the build only renders
    for cached in [".jupyter_cache", "engine"]:
        src = ROOT / "_build" / cached
        if src.is_dir():
            shutil.copytree(src, work / "_build" / cached, dirs_exist_ok=True)
    proc = subprocess.run(
        [sys.executable, "-m", "bookbuild", "build"],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=2400,
    )
    html = work / "_build" / "html"
    if proc.returncode != 0 or not (html / "index.html").exists():
        pytest.fail(
            "the book did not build for the browser "
            f"tests:\n{(proc.stdout + proc.stderr)[-3000:]}"
        )
    return html


@pytest.fixture(scope="session")
def site_dir(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """The built HTML site (``_build/html``)."""
    given = os.environ.get("BOOK_HTML_DIR")
    if given:
        html = Path(given).resolve()
        if not (html / "index.html").exists():
            pytest.fail(f"BOOK_HTML_DIR={given} holds no index.html")
        return html
    if chromium_binary() is None:
        pytest.skip("no Chromium to drive, so the site is not built for these tests")
    shared = (
        tmp_path_factory.getbasetemp()
        if worker_id == "master"
        else tmp_path_factory.getbasetemp().parent
    )
    work = shared / "site-for-browser-tests"
    with FileLock(str(shared / "site-for-browser-tests.lock")):
        if not (work / "_build" / "html" / "index.html").exists():
            _build_site(work)
    return work / "_build" / "html"


def launch_chromium(playwright):  # type: ignore[no-untyped-def]
    """Debian's Chromium (or ``$BOOK_CHROMIUM``), headless, launched through a
    Playwright instance."""
    binary = chromium_binary()
    if binary is None:
        raise RuntimeError(
            "no Chromium to drive: install Debian's chromium or set BOOK_CHROMIUM"
        )
    return playwright.chromium.launch(
        executable_path=binary, args=["--disable-gpu", "--no-sandbox"]
    )


def new_context(
    browser,
    *,
    scheme: str | None = None,
    offline: bool = True,
    outside: list[str] | None = None,
    **options,
):  # type: ignore[no-untyped-def]
    """A browser context for the book's pages: ``scheme`` ("light"/"dark") is both the
    system's colour scheme and the theme's stored choice; ``offline`` aborts every
    request that is not for a local file, noting its URL in ``outside`` when given;
    other keyword arguments go to Playwright's ``new_context``.
    """
    if scheme is not None:
        options["color_scheme"] = scheme
    context = browser.new_context(**options)
    if scheme is not None:
        # The theme reads the reader's choice from localStorage (its light/dark button),
        # else the system's.
        context.add_init_script(
            f"try {{ localStorage.setItem('mode', '{scheme}'); }} catch (e) {{}}"
        )
    if offline:

        def route(r):  # type: ignore[no-untyped-def]
            if r.request.url.startswith("file://"):
                r.continue_()
                return
            if outside is not None:
                outside.append(r.request.url)
            r.abort()

        context.route("**/*", route)
    return context


@contextmanager
def recording_page(browser, *, scheme: str | None = None, **options):  # type: ignore[no-untyped-def]
    """A fresh page (in its own :func:`new_context`) that aborts every request that is
    not for a local file and records it in ``page.outside_requests``, and collects
    console errors and uncaught exceptions in ``page.console_errors``."""
    outside: list[str] = []
    errors: list[str] = []
    context = new_context(browser, scheme=scheme, outside=outside, **options)
    try:
        p = context.new_page()
        p.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        p.on("pageerror", lambda e: errors.append(str(e)))
        p.outside_requests = outside
        p.console_errors = errors
        yield p
    finally:
        context.close()


class OnFirstUse(dict):  # type: ignore[type-arg]
    """key -> ``make(key)``, made when first asked for and kept: pages opened, or
    measured, once per key."""

    def __init__(self, make) -> None:  # type: ignore[no-untyped-def]
        super().__init__()
        self.make = make

    def __missing__(self, key):  # type: ignore[no-untyped-def]
        self[key] = value = self.make(key)
        return value


#: Tests that check one page at one width from the same load, (file, function): the
#: first only reads the page (axe), the second changes it (the render check opens every
#: fold). Each (page, width) pair of them is one xdist group, so that one worker loads
#: the page once for both (:class:`SharedLoads`).
SHARED_LOAD_TESTS = {
    ("test_audit.py", "test_axe_finds_no_serious_violation"),
    ("test_pages.py", "test_page_renders_offline_without_errors"),
}


# before xdist's, which turns the groups into node-id suffixes
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if (item.path.name, getattr(item, "originalname", None)) in SHARED_LOAD_TESTS:
            params = item.callspec.params  # type: ignore[attr-defined]
            item.add_marker(
                pytest.mark.xdist_group(f"load-{params['viewport']}-{params['name']}")
            )


class SharedLoads:
    """Pages loaded once per (page, width) and shared: :meth:`reading` gives a test that
    leaves the page as it is the loaded page and keeps it open; :meth:`changing` gives a
    test that changes it that same page if no test changed it before (else a fresh load)
    and closes it afterwards. Each page is a :func:`recording_page` loaded with
    ``test_pages.open_page``; ``load_outside_requests`` and ``load_console_errors`` hold
    what the load asked for and logged (``outside_requests`` and ``console_errors`` go
    on collecting).
    """

    def __init__(self, browser, site_dir: Path) -> None:  # type: ignore[no-untyped-def]
        self.browser, self.site_dir, self.open = browser, site_dir, {}

    def _load(self, name: str, viewport: str):  # type: ignore[no-untyped-def]
        from tests.browser.test_pages import VIEWPORTS, open_page

        opened = recording_page(self.browser, viewport=VIEWPORTS[viewport])
        page = opened.__enter__()
        try:
            open_page(page, self.site_dir, name)
        except BaseException:
            opened.__exit__(None, None, None)
            raise
        # what the load itself asked and logged, before a test acts on the page (axe's
        # own stylesheet requests fail on file:// with a console error of their own)
        page.load_outside_requests = list(page.outside_requests)
        page.load_console_errors = list(page.console_errors)
        return opened, page

    def reading(self, name: str, viewport: str):  # type: ignore[no-untyped-def]
        if (name, viewport) not in self.open:
            self.open[name, viewport] = self._load(name, viewport)
        return self.open[name, viewport][1]

    @contextmanager
    def changing(self, name: str, viewport: str):  # type: ignore[no-untyped-def]
        opened, page = self.open.pop((name, viewport), None) or self._load(
            name, viewport
        )
        try:
            yield page
        finally:
            opened.__exit__(None, None, None)

    def close(self) -> None:
        while self.open:
            self.open.popitem()[1][0].__exit__(None, None, None)


@pytest.fixture(scope="session")
def shared_loads(browser, site_dir: Path) -> Iterator[SharedLoads]:  # type: ignore[no-untyped-def]
    """This worker's :class:`SharedLoads`."""
    loads = SharedLoads(browser, site_dir)
    yield loads
    loads.close()


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """A headless Chromium; the tests are skipped, with the reason, when there is
    none."""
    binary = chromium_binary()
    if binary is None:
        pytest.skip(
            "Chromium is not installed: `make test` installs Debian's chromium with "
            "apt-get where it is available (or set BOOK_CHROMIUM to a Chromium binary)"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = launch_chromium(p)
        yield chromium
        chromium.close()
