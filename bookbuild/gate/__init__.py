"""The regression gate and the build report: compare each chapter's outputs with its
accepted baseline.

``check`` fails with a list of differences (chapter, cell, old -> new);
``accept`` records the current outputs as the new baseline on purpose and
prints what changed. Both first bring the executed chapters up to date with
the engine. The build report page (``book/build-report.md``, generated) lists,
per chapter, where and how it ran and whether its outputs match the baseline.

Which baselines apply: ``baselines/<profile>/``. The pinned CPU profile is
always compared (a missing baseline is a difference). A CPU that cannot run the
pinned kernels (an ARM CPU, an x86 CPU without AVX2) has no baselines of its own:
it is compared with the pinned profile's, at every output's declared precision,
and the verdict says how many outputs matched exactly and how many within their
precision. A GPU kind (``cuda-sm90``) is compared only against baselines recorded
with the same PyTorch, CUDA and cuDNN (``baselines/<profile>/software.json``,
written by ``accept``); a GPU kind with no baselines, or with baselines of other
software, says so and compares nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bookbuild import files
from bookbuild.execute import engine, machine_facts
from bookbuild.execute.events import run_anchor
from bookbuild.gate import baselines, editions, pagecontent
from bookbuild.lint import references
from chapter_code.core import machine

BASELINES = Path("baselines")
REPORT_PAGE = Path("book") / "build-report.md"
#: Under the build folder: for every figure that differs, its baseline, its new image
#: and their difference.
REVIEW = "review"
#: In a GPU profile's baseline folder: the PyTorch, CUDA and cuDNN versions its
#: baselines were recorded with.
SOFTWARE_FILE = "software.json"


@dataclass
class ChapterCheck:
    result: engine.ChapterResult
    differences: list[baselines.Difference]
    recorded: tuple[dict, dict, dict] | None  # records, files, options
    compared: bool = True  # False where no baseline applies to this machine's profile
    # page sections its baseline predates (not compared until accepted)
    unrecorded: tuple[str, ...] = ()
    # how many outputs matched bit for bit, how many within precision
    exactness: baselines.Exactness | None = None
    # glue names the text cites but no cell glues, figures without alt text
    references: tuple[str, ...] = ()


def baseline_dir(root: Path, profile: str) -> Path:
    return root / BASELINES / profile


def recorded_software(root: Path, profile: str) -> dict[str, str] | None:
    """The GPU software a GPU profile's baselines were recorded with, or ``None`` when
    none are recorded."""
    path = baseline_dir(root, profile) / SOFTWARE_FILE
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    # committed: report it, never delete it
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        print(
            f"gate: {path} is unreadable ({exc}); treating the baselines of {profile} "
            "as of unknown software",
            file=sys.stderr,
        )
        return {"unreadable": str(path)}
    return data if isinstance(data, dict) else {"unreadable": str(path)}


def compared_profile(profile: str) -> str:
    """Whose baselines ``profile`` is compared with: its own, except a CPU without a
    recorded profile of its own (an ARM CPU, an x86 CPU without AVX2), which is compared
    with the pinned CPU profile's at declared precision."""
    if machine.is_gpu_profile(profile) or profile in machine.PROFILE_DESCRIPTIONS:
        return profile
    return machine.PINNED_PROFILE


def not_compared_reason(
    root: Path, profile: str, software: dict[str, str] | None = None
) -> str:
    """Why outputs of ``profile`` are not compared on this machine ("" when they are).

    ``software`` is this machine's GPU software (``numerics.gpu_software``; read
    from the build's device when not given).
    """
    if machine.is_gpu_profile(profile):
        if software is None:
            software = engine.gpu_software()
        recorded = recorded_software(root, profile)
        if recorded is None:
            return f"no baselines are recorded for the GPU kind {profile!r}"
        if recorded != software:
            return (
                f"the baselines of {profile!r} were recorded with "
                f"{_software_text(recorded)}, and this build runs "
                f"{_software_text(software)}"
            )
        return ""
    # a CPU: its own baselines, or the pinned profile's at declared precision
    # (compared_profile)
    return ""


def _software_text(software: dict[str, str]) -> str:
    return (
        ", ".join(f"{name} {software[name]}" for name in sorted(software))
        or "no GPU software"
    )


def profile_has_baselines(root: Path, profile: str) -> bool:
    """Whether outputs of ``profile`` are compared (see :func:`not_compared_reason`).

    Every CPU is (against :func:`compared_profile`'s baselines; a missing baseline is a
    failure); a GPU kind only against baselines of the same GPU software.
    """
    return not not_compared_reason(root, profile)


def profile_is_recorded(profile: str) -> bool:
    """Whether ``accept`` records baselines for ``profile``: the pinned CPU profile and
    every GPU kind."""
    return profile in machine.PROFILE_DESCRIPTIONS or machine.is_gpu_profile(profile)


def page_records(
    root: Path, chapter: str, options: dict[str, dict]
) -> tuple[dict[str, list], list[str]]:
    """The page's own baseline sections (cell options, listings, panel data) and the
    listings that cannot be cut."""
    listed, problems = pagecontent.listings(root, chapter)
    opts = [{"cell": label, **opts} for label, opts in options.items() if opts]
    return {
        pagecontent.OPTIONS: opts,
        pagecontent.LISTINGS: listed,
        pagecontent.PANELS: pagecontent.panels(root, chapter),
    }, problems


def check_chapters(
    root: Path,
    results: list[engine.ChapterResult],
    profile: str,
    compared: bool | None = None,
) -> list[ChapterCheck]:
    """Compare what each chapter's page will show (the cached outputs myst-nb renders)
    with its baseline.

    What it shows is its cells' outputs, its listings and its panels' data
    (:func:`page_records`). ``compared`` defaults to whether ``profile``'s baselines
    apply here (:func:`profile_has_baselines`); ``True`` compares with
    ``baselines/<profile>/`` whatever this machine is. A figure that differs is written
    out for review (:func:`write_review`).
    """
    if compared is None:
        compared = profile_has_baselines(root, profile)
    checks = []
    for result in results:
        if result.status in ("failed", "stale"):
            checks.append(ChapterCheck(result, [], None, compared))
            continue
        try:
            nb = engine.rendered_notebook(root, result.chapter)
        # its code cells were edited after they executed, while this command ran
        except KeyError:
            raise files.UserError(
                f"{result.chapter}.md changed while the build was running: its code "
                "cells no longer match the outputs just executed, so there is nothing "
                "to compare; run the command again (it executes only what changed)"
            ) from None
        cited = tuple(references.page_problems(root, result.chapter, nb))
        recs, images, options = baselines.extract(nb, result.chapter)
        page, problems = page_records(root, result.chapter, options)
        recs = {**recs, **page}
        diffs: list[baselines.Difference] = [
            baselines.Difference(result.chapter, "listing", "shown", p)
            for p in problems
        ]
        exactness = None
        if compared:
            base = baselines.read_baseline(
                baseline_dir(root, compared_profile(profile)), result.chapter
            )
            diffs = baselines.compare(
                result.chapter, base, recs, images, options, problems
            )
            exactness = baselines.exactness(base, recs, images, diffs)
            if base is not None and any(d.figure for d in diffs):
                diffs = write_review(root, result.chapter, base[1], images, diffs)
            # nothing to review now: no stale images left
            elif review_dir(root, result.chapter).is_dir():
                shutil.rmtree(review_dir(root, result.chapter))
            unrecorded = tuple(
                k
                for k in pagecontent.PAGE_KEYS
                if base is not None and k not in base[0]
            )
        else:
            unrecorded = ()
        checks.append(
            ChapterCheck(
                result,
                diffs,
                (recs, images, options),
                compared,
                unrecorded,
                exactness,
                cited,
            )
        )
    return checks


def review_dir(root: Path, chapter: str) -> Path:
    return engine.build_dir(root) / REVIEW / Path(chapter).name


def write_review(
    root: Path,
    chapter: str,
    figures: Path,
    images: dict[str, bytes],
    diffs: list[baselines.Difference],
) -> list[baselines.Difference]:
    """For each differing figure: ``<stem>-baseline.png``, ``<stem>-new.png`` and
    ``<stem>-diff.png``.

    Written under ``_build/review/<page>/`` (the page's folder is emptied first);
    returns ``diffs`` with each figure's paths (relative to ``root`` where they lie
    inside it) in ``review``.
    """
    from matplotlib.testing.compare import save_diff_image

    folder = review_dir(root, chapter)
    if folder.is_dir():
        shutil.rmtree(folder)
    paths: dict[str, tuple[str, ...]] = {}
    for name in dict.fromkeys(d.figure for d in diffs if d.figure):
        stem = name.removesuffix(".png")
        old, new, diff = (
            folder / f"{stem}-{part}.png" for part in ("baseline", "new", "diff")
        )
        folder.mkdir(parents=True, exist_ok=True)
        written = []
        if (figures / name).exists():
            shutil.copyfile(figures / name, old)
            written.append(old)
        if name in images:
            new.write_bytes(images[name])
            written.append(new)
        if len(written) == 2:
            try:
                save_diff_image(str(old), str(new), str(diff))
                written.append(diff)
            except Exception as exc:  # noqa: BLE001 - sizes differ: the two images still show it
                print(
                    f"gate: no difference image for {chapter} {name}: "
                    f"{str(exc).splitlines()[0]}",
                    file=sys.stderr,
                )
        paths[name] = tuple(_shown(root, path) for path in written)
    return [
        replace(d, review=paths[d.figure]) if d.figure in paths else d for d in diffs
    ]


def _shown(root: Path, path: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def failures_text(checks: list[ChapterCheck]) -> str:
    return "\n\n".join(
        c.result.error for c in checks if c.result.status in ("failed", "stale")
    )


def _verdict(c: ChapterCheck) -> str:
    if c.result.status == "failed":
        return "**FAILED to execute**: build fails"
    if c.result.status == "stale":
        return "**STALE** (a source changed during execution): build fails"
    if not c.compared:
        return "not compared (no baseline for this machine's profile and software)"
    if c.differences:
        return (
            f"**{len(c.differences)} difference(s)**: `make check` fails until reviewed"
        )
    return "matches the baseline"


def _outputs(c: ChapterCheck) -> int | None:
    """How many of a chapter's outputs were compared with their baseline (None when none
    was)."""
    if not c.compared or c.exactness is None:
        return None
    return c.exactness.exact + len(c.exactness.within) + len(c.differences)


def print_summary(checks: list[ChapterCheck], profile: str) -> list[str]:
    """What the PDF prints of the report (``{only} latex``; ``bookbuild.site.pdf``
    leaves the report's sections to the site): what the build did, how many outputs it
    compared and how they matched, per chapter, and where the full report is."""
    counted = [n for n in (_outputs(c) for c in checks) if n is not None]
    lines = [
        "```{only} latex",
        "Generated by the build that printed this book. Every chapter was executed, or "
        "its stored outputs reused",
        "when nothing it reads had changed, and each of its outputs (printed text, "
        "displayed and glued values,",
        "figures' text, data and pixels) was compared with the baseline the authors "
        "accepted.",
        "",
    ]
    if counted:
        found = [c.exactness for c in checks if c.compared and c.exactness is not None]
        exact, within = sum(e.exact for e in found), sum(len(e.within) for e in found)
        differ = sum(len(c.differences) for c in checks if c.compared)
        lines += [
            f"This build compared {{lit}}`{sum(counted)}` outputs of "
            f"{{lit}}`{len(counted)}` pages: {{lit}}`{exact}` equal bit for bit, "
            f"{{lit}}`{within}` equal within their declared precision, "
            f"{{lit}}`{differ}` different.",
            "",
        ]
    else:
        lines += [
            f"Nothing was compared with a baseline: {_reason_or_default(profile)}.",
            "",
        ]
    lines += ["| page | outputs compared | verdict |", "|---|---:|---|"]
    for c in checks:
        n = _outputs(c)
        lines.append(
            f"| {{doc}}`/{c.result.chapter}` | {'-' if n is None else f'{{lit}}`{n}`'} "
            f"| {_verdict(c)} |"
        )
    lines += [
        "",
        "The full report (where each chapter ran and on what software, the settings of "
        "this build, the computations it reused, the files each chapter read, the "
        "precision of every output and each difference from the baseline) is page "
        "`book/build-report.html` of the HTML edition.",
        "```",
        "",
    ]
    return lines


def report_text(checks: list[ChapterCheck], profile: str) -> str:
    """The build report page (MyST): verdicts first, then how each chapter ran, then
    every difference."""
    fp = machine_facts.fingerprint(engine.build_dir(engine.ROOT))
    lines = [
        "(build-report)=",
        "# Build report",
        "",
        *print_summary(checks, profile),
        "```{only} html",
        "Generated by the build that produced these pages. Each chapter executes in "
        "its own kernel when",
        "its code cells, a file it read (an imported `chapter_code` module, a data "
        "file, the style file), the",
        "settings that change outputs (seed, threads, device, CPU numerics), the "
        "locked packages or the",
        "output profile changed; otherwise its stored outputs are reused (a cache "
        "hit). Every output is then",
        f"compared with the accepted baseline in `baselines/{profile}/`: printed text "
        "must match exactly once",
        "durations, memory addresses and temporary paths are masked; numbers may "
        "differ only within a cell's",
        "stated `:tolerance:`; a figure's text must match exactly, its plotted numbers "
        "within a relative",
        f"{baselines.DEFAULT_FIGURE_RTOL:g} (or the cell's tolerance) and its pixels "
        "within an RMS of",
        f"{baselines.DEFAULT_IMAGE_TOLERANCE:g} (or the `image` of the cell's "
        "`:tolerance:`).",
        "",
        f"Output profile `{profile}`: {machine.describe_profile(profile)}.",
        *_compared_note(checks, profile),
        "",
        "| chapter | verdict | outcome | why | wall time (s) | executed at |",
        "|---|---|---|---|---:|---|",
    ]
    for c in checks:
        r = c.result
        outcome = {
            "hit": "cache hit",
            "executed": "executed",
            "failed": "failed",
            "stale": "stale",
        }[r.status]
        why = r.reason.replace("|", "/")
        lines.append(
            f"| {{doc}}`/{r.chapter}` | {_verdict(c)} | {outcome} | {why} | "
            f"{r.wall_s:.1f} | {r.executed_at or '-'} |"
        )
    lines += ["```"]
    lines += [
        "",
        "## Where each chapter ran",
        "",
        "What the chapter's own kernel reported when it last executed: on a GPU, also "
        "its kind, CUDA and",
        "cuDNN versions and the determinism settings in force (`runtime.setup`).",
        "",
        "| chapter | device | CPU kernels | torch | threads | seed | GPU kind | CUDA | "
        "cuDNN | GPU numerics |",
        "|---|---|---|---|---:|---:|---|---|---|---|",
    ]
    for c in checks:
        f = c.result.fingerprint or {}
        cells = " | ".join(
            str(f.get(k, "-"))
            for k in (
                "device_name",
                "cpu_kernels",
                "torch_version",
                "threads",
                "seed",
                "gpu_kind",
                "cuda_version",
                "cudnn_version",
                "gpu_numerics",
            )
        )
        lines.append(f"| {{doc}}`/{c.result.chapter}` | {cells} |")
    lines += [
        "",
        "## This build",
        "",
        "| setting | value |",
        "|---|---|",
        *[f"| {label} | `{value}` |" for label, value in fp.as_rows()],
    ]
    runs = [(c.result, r) for c in checks for r in c.result.runs]
    if runs:
        lines += [
            "",
            "## Memoized runs",
            "",
            "Expensive computations inside chapters (`runtime.run_once`). *Computed* "
            "and *reused* are memoized runs, keyed by the definitions they reach, "
            "their arguments and data: reused means read back from an earlier "
            "computation in this build folder, and a clean build computes every one. "
            "*Made ahead* is a call a sweep made before the build, read from its "
            "checked record (its key names the sweep, configuration and job; its time "
            "is the training's). For a chapter that was a cache hit, the runs are "
            "those of its last execution.",
            "",
            "| chapter | run | seed | outcome | wall time (s) | computing it took (s) "
            "| key |",
            "|---|---|---:|---|---:|---:|---|",
        ]
        anchored: set[str] = set()
        for result, r in runs:
            # the numbers' previews link here: the first row of a run read by several
            # chapters holds the id
            row_id = run_anchor(r["key"])
            anchor = "" if row_id in anchored else f'<span id="{row_id}"></span>'
            anchored.add(row_id)
            lines.append(
                f"| {{doc}}`/{result.chapter}` | `{r['function']}` | "
                f"{r.get('seed', '')} | {r['outcome']} | {r['wall_s']:.1f} | "
                f"{r['compute_s']:.1f} | {anchor}`{r['key']}` |"
            )
    notes = [(c.result.chapter, note) for c in checks for note in c.result.notes]
    if notes:
        lines += [
            "",
            "## Notes from the build",
            "",
            "What the build's machinery reported while a chapter executed (never part "
            "of its outputs).",
            "",
        ]
        lines += [f"- {{doc}}`/{chapter}`: `{note}`" for chapter, note in notes]
    lines += editions.section(engine.ROOT)
    lines += ["", "## What each chapter read", ""]
    for c in checks:
        deps = ", ".join(f"`{d}`" for d in c.result.dependencies) or "nothing traced"
        lines.append(f"- {{doc}}`/{c.result.chapter}`: {deps}")
    lines += [
        "",
        "## Precision",
        "",
        "Some results depend on the last bits of the CPU's kernels: Intel and AMD "
        "processors, for one, run different matrix and vector-maths kernels for some "
        "shapes. So every output is compared at the precision it really has: a value "
        "that is rounding error by nature (the largest difference between two "
        "implementations) is recorded as its bound; a claim's other values within one "
        "unit of their last shown digit; figures' plotted numbers within a relative "
        f"{baselines.DEFAULT_FIGURE_RTOL:g}; anything else exactly, unless its cell "
        "declares a tolerance with its reason (below). `make check-portable` executes "
        "the chapters once more on other kernels to find any output that moves.",
        "",
    ]
    if any(c.exactness for c in checks):
        lines += [f"This build: {exactness_text(checks)}.", ""]
    tolerances = declared_tolerances(checks)
    if tolerances:
        lines += ["| chapter | cell | tolerance | reason |", "|---|---|---|---|"]
        for chapter, label, tol in tolerances:
            amounts = ", ".join(
                f"{k} {v:g}"
                if k != "lines"
                else "lines " + ", ".join(f"'{x}'" for x in v)
                for k, v in tol.items()
                if k != "reason"
            )
            reason = str(tol.get("reason", "")).replace("|", "/")
            lines.append(f"| {{doc}}`/{chapter}` | `{label}` | {amounts} | {reason} |")
    diffs = [d for c in checks for d in c.differences]
    if diffs:
        lines += ["", "## Differences from the baseline", ""]
        for d in diffs:
            lines.append(f"- `{d.chapter}` cell `{d.cell}`: `{d.old}` → `{d.new}`")
            if d.detail:  # the cell's whole text, as a unified diff
                lines += [
                    "",
                    "  ````text",
                    *[f"  {line}" for line in d.detail.splitlines()],
                    "  ````",
                    "",
                ]
    lines += review_section(diffs)
    failed = failures_text(checks)
    if failed:
        lines += ["", "## Failures", "", "```text", failed, "```"]
    return "\n".join(lines) + "\n"


def review_section(diffs: list[baselines.Difference]) -> list[str]:
    """The report's figures to review: baseline, this build and their difference side by
    side, with what differs."""
    figures: dict[tuple[str, str], list[baselines.Difference]] = {}
    for d in diffs:
        if d.figure:
            figures.setdefault((d.chapter, d.figure), []).append(d)
    if not figures:
        return []
    lines = [
        "",
        "## Figures to review",
        "",
        "Each differing figure as accepted (baseline), as this build drew it, and "
        "their difference (bright where pixels moved), with its differences in text "
        "and plotted data.",
        "",
    ]
    for (chapter, name), found in figures.items():
        lines += [f"### `{chapter}`: `{name}`", ""]
        review = found[0].review
        if review and all(not Path(path).is_absolute() for path in review):
            heads = [Path(path).stem.rsplit("-", 1)[-1] for path in review]
            names = {"baseline": "baseline", "new": "this build", "diff": "difference"}
            lines += [
                "| " + " | ".join(names.get(h, h) for h in heads) + " |",
                "|" + "---|" * len(review),
                "| "
                + " | ".join(
                    f"![{names.get(h, h)}](/{path})"
                    for h, path in zip(heads, review, strict=True)
                )
                + " |",
                "",
            ]
        elif review:
            lines += [f"- `{path}`" for path in review] + [""]
        lines += [f"- cell `{d.cell}`: `{d.old}` → `{d.new}`" for d in found]
        lines.append("")
    return lines


def _titles(root: Path, chapters: list[str]) -> dict[str, str]:
    out = {}
    for chapter in chapters:
        heading = next(
            (
                line[2:].strip()
                for line in (root / f"{chapter}.md").read_text().splitlines()
                if line.startswith("# ")
            ),
            chapter,
        )
        out[chapter] = heading
    return out


def claim_pages(root: Path, checks: list[ChapterCheck]) -> list[Any]:
    """Claims and checks of every chapter that produced usable outputs
    (:mod:`bookbuild.lint.claims`)."""
    from bookbuild.lint import claims

    usable = [
        c.result.chapter for c in checks if c.result.status in ("hit", "executed")
    ]
    return claims.collect(root, usable)


def _listed(heading: str, problems: list[str]) -> int:
    """1 after printing ``heading`` (with the count) and one line per problem to stderr;
    0 when there is none."""
    if not problems:
        return 0
    print(f"\n{len(problems)} {heading}:", file=sys.stderr)
    for problem in problems:
        print(f"  {problem}", file=sys.stderr)
    return 1


def claims_verdict(pages: list[Any]) -> int:
    """1, with one line per claim without its check or check without its claim (page and
    label), or 0."""
    from bookbuild.lint import claims

    return _listed("claim(s) and check(s) do not pair up", claims.problems(pages))


def source_verdict(root: Path) -> int:
    """Before anything executes: 1, with one line per mistake the pages' source shows (a
    glue name no cell glues, a claim without its check or a check without its claim, a
    figure without alt text, two cells with one name; :mod:`bookbuild.lint.source`), or
    0."""
    from bookbuild.lint import source

    return _listed(
        "mistake(s) in the pages' source, found before executing anything",
        source.check_pages(root),
    )


def references_verdict(checks: list[ChapterCheck]) -> int:
    """1, with one line per unknown glue name and per figure without alt text (file and
    line), or 0."""
    return _listed(
        "reference(s) from a page's text that its cells do not provide",
        [problem for c in checks for problem in c.references],
    )


def claims_table(pages: list[Any]) -> list[str]:
    """The build report's rows: claims and checks per chapter."""
    lines = [
        "",
        "## Claims and checks",
        "",
        "Result sentences marked as claims, and the checks their cells declared "
        "({ref}`checked` lists each one).",
        "",
        "| chapter | claims | checks | held | result sentences without a claim |",
        "|---|---:|---:|---:|---:|",
    ]
    for page in pages:
        lines.append(
            f"| {{doc}}`/{page.chapter}` | {len(page.claims)} | {len(page.checks)} | "
            f"{page.held} | {len(page.unclaimed)} |"
        )
    return lines


def _compared_note(checks: list[ChapterCheck], profile: str) -> list[str]:
    """A line saying why nothing was compared, when nothing was."""
    if checks and not any(c.compared for c in checks):
        return [
            "",
            f"Nothing was compared with a baseline: {_reason_or_default(profile)}.",
        ]
    return []


def _reason_or_default(profile: str) -> str:
    try:
        return not_compared_reason(engine.ROOT, profile) or "no baseline applies"
    except Exception:  # noqa: BLE001 - a report must not fail over its explanation
        return "no baseline applies"


def write_report(
    root: Path, checks: list[ChapterCheck], profile: str, pages: list[Any] | None = None
) -> Path:
    """Write the build-report page and the claims appendix from this run's results.

    Never from a failed chapter's outputs.
    """
    from bookbuild.lint import claims

    pages = claim_pages(root, checks) if pages is None else pages
    claims.write_appendix(root, pages, _titles(root, [p.chapter for p in pages]))
    page = root / REPORT_PAGE
    text = report_text(checks, profile) + "\n".join(claims_table(pages)) + "\n"
    if not page.exists() or page.read_text() != text:
        files.write_text(page, text)
    return page


def prepare_data(root: Path) -> None:
    """Build the corpora the chapters read, once and in order, before any chapter runs.

    Chapters execute in parallel, and two of them (Chapters 4 and 5) read the
    Shakespeare corpus (Chapters 6 and 7 the Milton corpus too), which is built on first
    use; building it here first means no two kernels ever race to write it. Does nothing
    in a book without ``chapter_code/corpora/texts.py`` (the engine's own tests), and
    nothing but a hash check once the file exists.
    """
    if not (root / "chapter_code" / "corpora" / "texts.py").is_file():
        return
    # BOOK_BUILD_DIR elsewhere: nothing goes into the checkout
    if not engine.build_dir(root).is_relative_to(root):
        corpora = ["shakespeare.txt"] + (
            ["milton.txt"]
            if (root / "chapter_code" / "corpora" / "milton.py").is_file()
            else []
        )
        missing = [
            f"data/{name}" for name in corpora if not (root / "data" / name).is_file()
        ]
        if missing:
            raise files.UserError(
                f"{', '.join(missing)} not built yet, and with BOOK_BUILD_DIR set the "
                "build writes nothing into the checkout: build the corpora once where "
                "the checkout is writable (`make check` without BOOK_BUILD_DIR), then "
                "run this again"
            )
    engine.pin_bytecode(root)
    probe = (
        "from chapter_code.corpora.texts import shakespeare_text; shakespeare_text()"
    )
    if (root / "chapter_code" / "corpora" / "milton.py").is_file():
        probe += "; from chapter_code.corpora.milton import milton_text; milton_text()"
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=root, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise files.UserError(
            f"could not prepare data/ for the chapters:\n{done.stderr.strip()[-2000:]}"
        )


def run_and_check(
    root: Path, only: list[str] | None = None
) -> tuple[list[ChapterCheck], str]:
    prepare_data(root)
    results = engine.run(root, only=only)
    profile = engine.device_profile()
    return check_chapters(root, results, profile), profile


def verdict(checks: list[ChapterCheck], profile: str) -> int:
    """Print the gate's verdict; 0 when every compared output matches its baseline."""
    failed = failures_text(checks)
    if failed:
        print(f"\nA chapter did not produce usable outputs:\n{failed}", file=sys.stderr)
        return 1
    if checks and not checks[0].compared:
        reason = (
            _reason_or_default(profile)
            if machine.is_gpu_profile(profile)
            else (
                f"no baseline applies to this machine (output profile {profile!r}: "
                f"{machine.describe_profile(profile)})"
            )
        )
        print(f"check: {reason}; outputs were built but not compared.")
        return 0
    older = [Path(c.result.chapter).name for c in checks if c.unrecorded]
    if older:
        print(
            f"check: the baselines of {', '.join(older)} predate the recording of cell "
            "options, listings and panel data, which are not compared for them; `make "
            "accept` adds them and rewrites nothing else that matches"
        )
    diffs = [d for c in checks for d in c.differences]
    if diffs:
        print(
            f"\n{len(diffs)} output(s) differ from baselines/{profile}/ (chapter "
            "[cell]: old -> new):",
            file=sys.stderr,
        )
        for d in diffs:
            print(f"  {d}", file=sys.stderr)
            if d.detail:
                print(_indented(d.detail), file=sys.stderr)
        reviewed = dict.fromkeys(
            (d.chapter, d.figure, d.review) for d in diffs if d.review
        )
        if reviewed:
            print(
                "Figures to review (baseline, this build, difference):", file=sys.stderr
            )
            for chapter, figure, paths in reviewed:
                print(f"  {chapter} {figure}:", file=sys.stderr)
                print("\n".join(f"      {path}" for path in paths), file=sys.stderr)
        print(
            "Review them; if the change is intended, record it with `make accept` and "
            "commit the diff.",
            file=sys.stderr,
        )
        return 1
    print(
        f"check: every output of {len(checks)} chapter(s) matches "
        f"baselines/{compared_profile(profile)}/"
        + (
            f" (this machine's profile: {profile})"
            if compared_profile(profile) != profile
            else ""
        )
        + f": {exactness_text(checks)}"
    )
    return 0


def exactness_text(checks: list[ChapterCheck]) -> str:
    """``"812 outputs bit for bit, 3 within their declared precision (...)"``: how the
    outputs matched."""
    found = [c.exactness for c in checks if c.exactness is not None]
    exact = sum(e.exact for e in found)
    within = [w for e in found for w in e.within]
    text = (
        f"{exact} output(s) bit for bit, {len(within)} within their declared precision"
    )
    if within:
        text += (
            " (" + ", ".join(within[:6]) + (", ..." if len(within) > 6 else "") + ")"
        )
    return text


def declared_tolerances(checks: list[ChapterCheck]) -> list[tuple[str, str, dict]]:
    """(chapter, cell, its ``:tolerance:``) for every cell that declares one, in page
    order."""
    out = []
    for c in checks:
        if c.recorded is None:
            continue
        for label, opts in c.recorded[2].items():
            if opts.get("tolerance"):
                out.append((c.result.chapter, label, opts["tolerance"]))
    return out


def _indented(text: str) -> str:
    return "\n".join("      " + line for line in text.splitlines())


def figure_overlaps(root: Path, checks: list[ChapterCheck]) -> list[str]:
    """One line per figure whose texts overlap (:mod:`bookbuild.lint.figure_layout`),
    page and cell named."""
    problems = []
    for check_ in checks:
        if check_.result.status in ("failed", "stale"):
            continue
        try:
            nb = engine.rendered_notebook(root, check_.result.chapter)
        except KeyError:
            continue
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            label = cell.metadata.get("label", "unlabelled cell")
            figures = [
                o.get("data", {}).get(baselines.FIGURE_MIME)
                for o in cell.get("outputs", [])
            ]
            for n, summary in enumerate([f for f in figures if f], start=1):
                summary = json.loads(summary) if isinstance(summary, str) else summary
                for pair in summary.get("overlaps", []):
                    problems.append(
                        f"{check_.result.chapter} [{label}] figure {n}: texts overlap: "
                        f"{pair}"
                    )
    return problems


def layout_verdict(root: Path, checks: list[ChapterCheck]) -> int:
    """1, with one line per pair of overlapping texts in a figure, or 0. Not something
    to accept: fix the plot."""
    problems = figure_overlaps(root, checks)
    if problems:
        print(
            f"\n{len(problems)} pair(s) of texts overlap in the chapters' figures (fix "
            "the plotting code):",
            file=sys.stderr,
        )
        for problem in problems:
            print(f"  {problem}", file=sys.stderr)
        return 1
    return 0


def prose_verdict(root: Path) -> int:
    """The prose-number check (:mod:`bookbuild.lint.prose`): 1, with one message per
    hand-typed number, or 0."""
    from bookbuild.lint.prose import check_pages

    problems = check_pages(root)
    if problems:
        print(
            f"\n{len(problems)} number(s) typed by hand into the prose or captions "
            "(glue them from the computation, "
            "or mark a deliberate literal with {lit} or declare it in the page's "
            "front matter), or stated by an "
            "alt text but not shown by its figure:",
            file=sys.stderr,
        )
        for problem in problems:
            print(f"  {problem}", file=sys.stderr)
        return 1
    return 0


def check(root: Path = engine.ROOT) -> int:
    """Check the prose, execute what is stale and compare; writes nothing outside the
    build folder."""
    prose = prose_verdict(root)
    if source_verdict(root):
        print(
            "check FAILED before executing anything: fix the lines above (and the "
            "numbers listed above them, if any) and run it again",
            file=sys.stderr,
        )
        return 1
    checks, profile = run_and_check(root)
    paired = claims_verdict(claim_pages(root, checks))
    referenced = references_verdict(checks)
    outputs = verdict(checks, profile)
    layout = layout_verdict(root, checks)
    failed = [
        what
        for what, code in (
            ("outputs differ from the baselines", outputs),
            ("numbers are typed into the prose (listed above)", prose),
            ("claims and checks do not pair up (listed above)", paired),
            (
                "the text names values or alt text its cells lack (listed above)",
                referenced,
            ),
            ("texts overlap in figures (listed above)", layout),
        )
        if code
    ]
    if failed:
        print(f"check FAILED: {'; '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


def accept(root: Path = engine.ROOT, only: list[str] | None = None) -> int:
    if ci_environment():
        print(
            "accept refuses to run under CI: baselines are accepted by a person.",
            file=sys.stderr,
        )
        return 2
    checks, profile = run_and_check(root, only)
    failed = failures_text(checks)
    if failed:
        print(
            f"\nNothing accepted; a chapter did not produce usable outputs:\n{failed}",
            file=sys.stderr,
        )
        return 1
    if not (profile_is_recorded(profile) or baseline_dir(root, profile).is_dir()):
        print(
            f"accept: this machine's output profile {profile!r} is not one the book "
            f"records ({machine.describe_profile(profile)}); nothing accepted.",
            file=sys.stderr,
        )
        return 1
    changed, written = 0, []
    if machine.is_gpu_profile(profile):
        written += _restamp_gpu_baselines(
            root,
            profile,
            engine.gpu_software(),
            {c.result.chapter for c in checks},
        )
    for c in checks:
        assert c.recorded is not None
        recs, images, options = c.recorded
        # outputs that compare equal keep the baseline's text and figures: only what
        # differs is rewritten
        recs, images = baselines.settle(
            baselines.read_baseline(baseline_dir(root, profile), c.result.chapter),
            recs,
            images,
            options,
        )
        if c.differences:
            changed += len(c.differences)
            print(f"{c.result.chapter}: accepting {len(c.differences)} change(s):")
            for d in c.differences:
                print(f"  [{d.cell}] {d.old} -> {d.new}")
                if d.detail:
                    print(_indented(d.detail))
        written += baselines.write_baseline(
            baseline_dir(root, profile), c.result.chapter, recs, images
        )
    for path in written:
        print(f"  wrote {path.relative_to(root)}")
    print(
        f"accept: {changed} change(s), {len(written)} file(s) written in "
        f"baselines/{profile}/; review with `git diff baselines/` and commit"
    )
    return 0


def _restamp_gpu_baselines(
    root: Path, profile: str, software: dict[str, str], chapters: set[str]
) -> list[Path]:
    """Before a GPU kind's baselines are written for ``software``: its stamp, and no
    baseline of other software left.

    Baselines of other GPU software (or of none recorded) for chapters this
    accept does not write are removed, so every baseline in the folder holds
    for the software its ``software.json`` names. Returns the files changed.
    """
    reason = not_compared_reason(root, profile, software)
    if not reason:
        return []
    folder = baseline_dir(root, profile)
    print(
        f"accept: {reason}; recording the baselines of {profile!r} for "
        f"{_software_text(software)}"
    )
    changed = []
    names = {Path(c).name for c in chapters}
    for old in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        if old.name != SOFTWARE_FILE and old.stem not in names:
            print(
                f"accept: removing {old.relative_to(root)}: recorded with other GPU "
                "software, not re-recorded now"
            )
            old.unlink()
            changed.append(old)
            figures = folder / old.stem
            if figures.is_dir():
                changed += sorted(figures.iterdir())
                shutil.rmtree(figures)
    stamp = folder / SOFTWARE_FILE
    files.write_json(stamp, software)
    return [*changed, stamp]


def ci_environment() -> bool:
    """True under CI: ``CI`` set to anything but an explicit no (``CI=true``, ``CI=1``,
    ``CI=on``, ...)."""
    return os.environ.get("CI", "").strip().lower() not in (
        "",
        "0",
        "false",
        "no",
        "off",
    )


def add_page_records(root: Path = engine.ROOT, profile: str = "cpu-avx2") -> int:
    """Migrate baselines written before cell options, listings and panel data were
    recorded: add those sections.

    Executes nothing and leaves every recorded output as it is: the sections are read
    from the pages, their cells' options and the current ``chapter_code`` sources,
    exactly as ``accept`` would record them. 1 when a listing cannot be cut (nothing is
    written for that page), else 0.
    """
    folder = baseline_dir(root, profile)
    code = 0
    for path in sorted(folder.glob("*.json")):
        chapter = f"book/{path.stem}"
        if path.name == SOFTWARE_FILE or not (root / f"{chapter}.md").exists():
            continue
        base = json.loads(path.read_text())
        missing = [k for k in pagecontent.PAGE_KEYS if k not in base]
        if not missing:
            continue
        options = baselines.validate_cells(
            engine.read_notebook(root / f"{chapter}.md"), chapter
        )
        page, problems = page_records(root, chapter, options)
        if problems:
            print("\n".join(problems), file=sys.stderr)
            code = 1
            continue
        base.update({key: page[key] for key in missing})
        files.write_text(path, baselines.dumps(base))
        print(
            f"  {path.relative_to(root)}: added "
            + ", ".join(f"{key} ({len(page[key])})" for key in missing)
        )
    print(f"review with `git diff {folder.relative_to(root)}/` and commit")
    return code
