"""Where each glued number came from, and each figure's plotted data, for the reader of
the HTML book.

Two things a reader can ask of a page without opening the repository:

- **A glued number's provenance.** Every ``{glue:text}`` value on a chapter page
  is marked (class ``glued``); hovering or focusing it shows the cell that glued
  it (its label and the glue statement), the memoized runs (function, key,
  whether this build computed or reused it) and sweep records (sweep,
  configuration, count, commits) its cell and the cells it reads from used, and
  links to the listings on the page of the functions involved. The runs come
  from the chapter's kernel (:func:`bookbuild.execute.kernel_hooks.note_run`, with the
  number of the cell that called them); which cells a glue reads from is found
  from the cells' source (names each cell assigns and reads). That is an
  over-approximation: a run reached by the names a glue statement reads is
  listed even where only part of it fed the number.
- **A figure's data.** From the summary the gate records of every figure (its
  lines, points, bars and images, its labels and legends:
  :func:`bookbuild.execute.kernel_hooks.summarise_figure`), a table in the reader's
  terms (:func:`figure_table`: a column per axis, named by the axis's label and
  units, the series by their legend entries, numbers as the data held them, the
  plot's furniture left out) is written beside the page as CSV and JSON and linked
  under the figure; a diagram (its axes switched off) gets no link.

Listings included from ``chapter_code`` (``literalinclude`` with ``:pyobject:``)
get an anchor, ``#listing-<object>``, that both of these link to.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
from docutils import nodes

from bookbuild.execute.events import run_anchor
from bookbuild.execute.kernel_hooks import FIGURE_MIME

#: the most runs (and sweeps) one number's preview lists
MAX_LISTED = 6
_INCLUDE = re.compile(
    r"^(`{3,}|:{3,})\{literalinclude\}\s+(\S+)\s*\n((?::[^\n]*\n)*)", re.M
)
_PYOBJECT = re.compile(r"^:pyobject:\s*(\S+)", re.M)


# ------------------------------------------------------------------------ reading cells


def _parse(source: str) -> ast.Module | None:
    lines = [
        "" if line.lstrip().startswith(("%", "!")) else line
        for line in source.splitlines()
    ]
    try:
        return ast.parse("\n".join(lines))
    except SyntaxError:
        return None


def _names(tree: ast.AST) -> tuple[set[str], set[str]]:
    """Names a piece of code reads and names it binds."""
    loads, stores = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (stores if isinstance(node.ctx, ast.Store) else loads).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stores.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                stores.add((alias.asname or alias.name).split(".")[0])
    return loads, stores


def _slice(tree: ast.Module, names: set[str]) -> set[str]:
    """``names`` and every name the cell's statements that bind them read, until nothing
    is added."""
    needed = set(names)
    statements = [_names(stmt) for stmt in tree.body]
    grown = True
    while grown:
        grown = False
        for loads, stores in statements:
            if stores & needed and not loads <= needed:
                needed |= loads
                grown = True
    return needed


def _glue_calls(tree: ast.AST) -> list[tuple[str, ast.AST]]:
    """``glue("name", value, ...)`` calls with a literal name, and the texts of a
    check's ``cite={"name": text}`` (the check glues them)."""
    out: list[tuple[str, ast.AST]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        called = (
            func.id
            if isinstance(func, ast.Name)
            else func.attr
            if isinstance(func, ast.Attribute)
            else ""
        )
        first = node.args[0]
        if (
            called == "glue"
            and isinstance(first, ast.Constant)
            and isinstance(first.value, str)
        ):
            out.append((first.value, node))
        cite = (
            next((k.value for k in node.keywords if k.arg == "cite"), None)
            if called == "check"
            else None
        )
        if isinstance(cite, ast.Dict):
            out += [
                (key.value, value)
                for key, value in zip(cite.keys, cite.values, strict=True)
                if isinstance(key, ast.Constant) and isinstance(key.value, str)
            ]
    return out


def _calls(tree: ast.AST) -> set[str]:
    """The last component of every called name (``train(...)``, ``module.train(...)``:
    ``train``)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name):
                out.add(func.id)
            elif isinstance(func, ast.Attribute):
                out.add(func.attr)
    return out


def listings_in(source: str) -> list[tuple[str, str | None]]:
    """``(file, pyobject)`` of every ``literalinclude`` of a page's MyST source, in page
    order."""
    out = []
    for match in _INCLUDE.finditer(source):
        obj = _PYOBJECT.search(match[3])
        out.append((match[2], obj[1] if obj else None))
    return out


def listing_id(pyobject: str) -> str:
    return nodes.make_id(f"listing-{pyobject}")


# ----------------------------------------------------------- provenance of glued values


def glue_provenance(
    nb: Any, entry: dict[str, Any], listings: list[tuple[str, str | None]]
) -> dict[str, Any]:
    """For every glued name of an executed notebook: its cell, statement, runs, sweeps
    and listings.

    ``entry`` is the chapter's manifest entry (``runs`` and ``sweeps`` noted by its
    kernel, each with the ``cell`` execution count that called it); ``listings`` is
    :func:`listings_in` of the page's source.
    """
    by_cell: dict[int, list[dict[str, Any]]] = {}
    for run in entry.get("runs", []):
        by_cell.setdefault(run.get("cell", -1), []).append(run)
    sweeps_by_cell: dict[int, list[dict[str, Any]]] = {}
    for sweep in entry.get("sweeps", []):
        sweeps_by_cell.setdefault(sweep.get("cell", -1), []).append(sweep)
    listed = {obj.rsplit(".", 1)[-1]: obj for _, obj in listings if obj}

    # name -> position (in ``cells``) of the last cell that bound it
    defined_at: dict[str, int] = {}
    reads: list[set[int]] = []  # per cell: the cells whose names it reads
    cells: list[Any] = []
    out: dict[str, Any] = {}
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        pos = len(cells)
        cells.append(cell)
        tree = _parse(cell.source)
        loads, stores = _names(tree) if tree is not None else (set(), set())
        reads.append({defined_at[n] for n in loads if n in defined_at})
        glued = {
            o.get("metadata", {}).get("scrapbook", {}).get("name", "")
            for o in cell.get("outputs", [])
        }
        glued.discard("")
        statements = dict(_glue_calls(tree)) if tree is not None else {}
        for name in sorted(n for n in glued if not n.startswith("check:")):
            call = statements.get(name)
            if call is not None:
                needed = _slice(tree, _names(call)[0])
                start = {defined_at[n] for n in needed if n in defined_at}
                statement = ast.get_source_segment(cell.source, call) or ""
            else:  # a name made at run time (a loop's f-string): the whole cell
                start = reads[pos] | {pos}
                statement = ""
            seen, todo = {pos}, list(start - {pos})
            while todo:
                p = todo.pop()
                if p not in seen:
                    seen.add(p)
                    todo.extend(reads[p])
            # the code named is what computed the number: the glue cell and the cells
            # that bound what its statement reads; the runs and records are every cell
            # upstream (a training feeds a table)
            out[name] = _describe(
                cells,
                sorted(seen),
                pos,
                statement,
                by_cell,
                sweeps_by_cell,
                listed,
                direct=sorted(start | {pos}),
            )
        for n in stores:
            defined_at[n] = pos
    return out


def _describe(
    cells: list[Any],
    reached: list[int],
    pos: int,
    statement: str,
    by_cell: dict[int, list],
    sweeps_by_cell: dict[int, list],
    listed: dict[str, str],
    direct: list[int] | None = None,
) -> dict[str, Any]:
    runs, sweeps, called = [], [], set()
    for p in reached:
        count = cells[p].get("execution_count")
        runs += by_cell.get(count, []) if count is not None else []
        sweeps += sweeps_by_cell.get(count, []) if count is not None else []
    for p in reached if direct is None else direct:
        tree = _parse(cells[p].source)
        called |= _calls(tree) if tree is not None else set()
    unique_runs = list({(r["function"], r["key"]): r for r in runs}.values())
    unique_sweeps = list({(s["sweep"], s["config"]): s for s in sweeps}.values())
    for run in unique_runs:
        called.add(run["function"].rsplit(".", 1)[-1])
    shown = sorted({listed[c] for c in called if c in listed})
    cell = cells[pos]
    return {
        "cell": cell.metadata.get("label", ""),
        "number": pos + 1,
        "statement": statement if len(statement) <= 160 else statement[:157] + "...",
        "runs": [
            {
                "function": r["function"],
                "key": r["key"][:12],
                "outcome": r["outcome"],
                "compute_s": r.get("compute_s"),
                "anchor": run_anchor(r["key"]),
                **({"seed": r["seed"]} if "seed" in r else {}),
            }
            for r in unique_runs[:MAX_LISTED]
        ],
        "more_runs": max(0, len(unique_runs) - MAX_LISTED),
        "sweeps": unique_sweeps[:MAX_LISTED],
        "listings": [
            {"name": obj, "id": listing_id(obj)} for obj in shown[:MAX_LISTED]
        ],
    }


# -------------------------------------------------------------------------- figure data

_MATH = re.compile(r"\$([^$]*)\$")


def _words(label: str) -> str:
    """A label as a reader reads it: mathtext as plain characters (``$f_t$`` as ``fₜ``),
    lines joined."""
    from bookbuild.site.search import readable_math

    text = _MATH.sub(lambda m: readable_math(m[1].replace(r"\mathdefault", "")), label)
    return " ".join(text.split())


def _value(v: Any) -> str:
    """A plotted number as its data holds it: the shortest text that gives back the
    float32 it was (``0.6525``, not ``0.6524999737739563``), else at most 12 significant
    digits (``0.6``, not layout's ``0.6000000000000001``)."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    v = float(v)
    if v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    single = float(np.float32(v)) == v
    for digits in range(1, 13):
        text = f"{v:.{digits}g}"
        if (float(np.float32(float(text))) == v) if single else (float(text) == v):
            return text
    return f"{v:.12g}"


def _axes_text(summary: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """Per axes number: its title, x and y labels, tick labels and legend, from the
    summary's ``text``."""
    found: dict[int, dict[str, Any]] = {}
    pattern = re.compile(
        r"^axes (\d+) (title|x label|y label|x ticks|y ticks|legend): ?(.*)$", re.S
    )
    for line in summary.get("text", []):
        match = pattern.match(line)
        if match:
            axes = found.setdefault(int(match[1]), {})
            value = match[3]
            axes[match[2]] = (
                [_words(t) for t in value.split(" | ")]
                if match[2] in ("x ticks", "y ticks", "legend") and value
                else _words(value)
            )
    return found


def _is_number(tick: str) -> bool:
    try:
        float(tick.replace("\u2212", "-").replace("ᵀ", ""))
    except ValueError:
        return bool(re.fullmatch(r"[\d.−-]+(×)?\s*\d*[⁰¹²³⁴⁵⁶⁷⁸⁹⁻]*", tick))
    return True


def figure_table(summary: dict[str, Any]) -> tuple[list[str], list[list[str]]] | None:
    """A figure's plotted data as a table with the reader's columns: panel (when there
    are several), series (its legend entry), then one column per axis label in the
    figure's own words and units, and ``value`` for an image's cells. None for a
    diagram: a figure whose axes are all switched off plots no data.

    What is a plot's furniture rather than its data is left out or said as data: an
    error bar's caps (matplotlib's ``_nolegend_`` lines); a line across the whole axes
    (``axhline``) is its one value, with the other column empty; a position on an axis
    of named categories (a row per contender, bars grouped around a token, dots spread
    sideways) is the category's name, not its offset in the drawing.
    """
    texts = _axes_text(summary)
    items = [
        item
        for item in summary.get("data", [])
        if any(k in item for k in ("line", "points", "bars", "image"))
    ]
    data_axes = sorted(
        {i["axes"] for i in items if "x label" in texts.get(i["axes"], {})}
    )
    if not data_axes:
        return None

    def name(n: int, axis: str) -> str:
        own = texts[n].get(f"{axis} label", "")
        if own:
            return own
        if categories(n, axis) is not None:
            # a row per contender, a group per architecture: named by its tick labels
            return "category"
        shared = [
            texts[m].get(f"{axis} label", "")
            for m in data_axes
            if texts[m].get(f"{axis} label")
        ]
        # a panel that shares its axis with one labelled below
        return shared[0] if len(set(shared)) == 1 else axis

    def categories(n: int, axis: str) -> list[str] | None:
        ticks = texts[n].get(f"{axis} ticks") or []
        return ticks if ticks and not any(_is_number(t) for t in ticks) else None

    def coordinate(v: Any, names: list[str] | None) -> str:
        if names is None or v is None:
            return _value(v)
        i = round(float(v))
        return names[i] if 0 <= i < len(names) else _value(v)

    colorbar = [
        texts[m].get("y label", "")
        for m in texts
        if m not in data_axes and texts[m].get("y label")
    ]
    panels = len(data_axes) > 1
    columns: list[str] = (["panel"] if panels else []) + ["series"]
    for n in data_axes:
        for axis in ("x", "y"):
            if name(n, axis) not in columns:
                columns.append(name(n, axis))
    value_column = colorbar[0] if colorbar else "value"
    if any("image" in i for i in items if i["axes"] in data_axes):
        columns.append(value_column)

    rows: list[dict[str, str]] = []
    for item in items:
        n = item["axes"]
        if n not in data_axes:
            continue
        base = (
            {"panel": texts[n].get("title") or f"panel {data_axes.index(n) + 1}"}
            if panels
            else {}
        )
        xname, yname = name(n, "x"), name(n, "y")
        xcat, ycat = categories(n, "x"), categories(n, "y")
        label = item.get("line", item.get("points"))
        if label is not None:
            if label == "_nolegend_":
                continue
            series = "" if label.startswith("_") else _words(label)
            xy = item["xy"]
            xs, ys = [p[0] for p in xy], [p[1] for p in xy]
            if len(xy) == 2 and xs == [0.0, 1.0] and ys[0] == ys[1] and xcat is None:
                # across the axes
                rows.append({**base, "series": series, yname: coordinate(ys[0], ycat)})
                continue
            if len(xy) == 2 and ys == [0.0, 1.0] and xs[0] == xs[1] and ycat is None:
                # up the axes
                rows.append({**base, "series": series, xname: coordinate(xs[0], xcat)})
                continue
            rows += [
                {
                    **base,
                    "series": series,
                    xname: coordinate(x, xcat),
                    yname: coordinate(y, ycat),
                }
                for x, y in xy
            ]
        elif "bars" in item:
            bars = item["bars"]
            drawn = {
                _words(i.get("line") or i.get("points") or "")
                for i in items
                if i["axes"] == n
            }
            legend = [
                entry for entry in texts[n].get("legend") or [] if entry not in drawn
            ]  # the bars' entries
            per = (
                len(bars) // len(legend)
                if legend and len(bars) % len(legend) == 0
                else len(bars)
            )
            ticks = texts[n].get("x ticks") or []
            # one tick label per group of bars
            names = xcat or (ticks if len(ticks) == per else None)
            for k, (x, _, w, h) in enumerate(bars):
                at = (
                    ""
                    if x is None or w is None
                    else coordinate(round(x + w / 2), names)
                )
                series = legend[k // per] if legend and k // per < len(legend) else ""
                rows.append({**base, "series": series, xname: at, yname: _value(h)})
        elif "image" in item:
            rows += [
                {
                    **base,
                    "series": "",
                    xname: str(c),
                    yname: str(r),
                    value_column: _value(v),
                }
                for r, line in enumerate(item["image"])
                for c, v in enumerate(line)
            ]
    if not any(row.get("series") for row in rows):
        columns.remove("series")
    return columns, [[row.get(c, "") for c in columns] for row in rows]


def figure_csv(summary: dict[str, Any]) -> str:
    """:func:`figure_table` as CSV (a header of the reader's column names, a row per
    plotted value)."""
    table = figure_table(summary)
    buffer = io.StringIO()
    if table is not None:
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(table[0])
        writer.writerows(table[1])
    return buffer.getvalue()


def figure_json(summary: dict[str, Any]) -> str:
    """:func:`figure_table` as JSON: one object per row, keyed by the column names,
    numbers as numbers."""
    table = figure_table(summary)
    records = []
    for row in table[1] if table is not None else []:
        record: dict[str, Any] = {}
        for column, cell in zip(table[0], row, strict=True):
            if cell == "":
                continue
            try:
                record[column] = (
                    int(cell) if re.fullmatch(r"-?\d+", cell) else float(cell)
                )
            except ValueError:
                record[column] = cell
        records.append(record)
    return json.dumps(records, indent=1, ensure_ascii=False) + "\n"


def figure_summaries(nb: Any) -> dict[Any, tuple[str, dict[str, Any]]]:
    """The last figure each cell drew: (label, summary), keyed by the cell's label, else
    its execution count."""
    out: dict[Any, tuple[str, dict[str, Any]]] = {}
    for pos, cell in enumerate(c for c in nb.cells if c.cell_type == "code"):
        for output in cell.get("outputs", []):
            summary = output.get("data", {}).get(FIGURE_MIME)
            if summary:
                label = cell.metadata.get("label", "")
                out[label or cell.get("execution_count")] = (
                    label or f"cell-{pos + 1}",
                    summary,
                )
    return out


# --------------------------------------------------------------------------- Sphinx


def _chapter(app: Any, docname: str) -> tuple[Any, dict[str, Any]] | None:
    """The executed notebook and manifest entry of a chapter page, or None for a page
    without outputs."""
    from bookbuild.execute import engine

    root = Path(app.srcdir)
    if not (root / f"{docname}.md").is_file():
        return None
    cache = app.env.temp_data.setdefault("provenance_manifest", None)
    if cache is None:
        try:
            cache = engine.load_manifest(root)
        except (OSError, ValueError):
            cache = {}
        app.env.temp_data["provenance_manifest"] = cache
    if docname not in cache:
        return None
    # read once per page: the figure links (doctree-resolved) and the glue provenance
    # (html-page-context)
    notebooks = app.env.temp_data.setdefault("provenance_notebooks", {})
    if docname not in notebooks:
        try:
            notebooks[docname] = engine.rendered_notebook(root, docname)
        # no cached outputs for the page as it stands: nothing to describe
        except Exception:
            notebooks[docname] = None
    nb = notebooks[docname]
    return None if nb is None else (nb, cache[docname])


def executed_notebook(app: Any, docname: str) -> Any:
    """The chapter page's source merged with its cached outputs (read once per page,
    shared), or None."""
    found = _chapter(app, docname)
    return None if found is None else found[0]


def _traced_text_role() -> Any:
    from myst_nb.ext.glue.roles import PasteTextRole

    from bookbuild.site.notation import set_scientific

    class TracedPasteTextRole(PasteTextRole):
        """``{glue:text}``, with the glued key on the node so the page can say where the
        number came from."""

        def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
            result, messages = super().run()
            key = (
                self.text.rsplit(":", 1)[0]
                if self.text.count(":") and "::" not in self.text
                else self.text
            )
            key = key.split("::")[-1]
            for node in result:
                if isinstance(node, nodes.inline) and "pasted-text" in node["classes"]:
                    node["classes"] += ["glued", f"glue-key-{key}"]
                    # 1.3e-20 as 1.3 × 10⁻²⁰ (bookbuild.site.notation)
                    set_scientific(node)
            return result, messages

    return TracedPasteTextRole()


def mark_listings(app: Any, doctree: nodes.document, docname: str) -> None:
    """Give every listing of ``chapter_code`` its anchor, and every figure drawn by a
    cell its data links."""
    from bookbuild.site.pdf import _is_listing

    path = Path(app.srcdir) / f"{docname}.md"
    if not path.is_file():
        return
    listings = [obj for _, obj in listings_in(path.read_text())]
    blocks = [b for b in doctree.findall(nodes.literal_block) if _is_listing(b)]
    if len(blocks) == len(listings):
        used: dict[str, int] = {}
        for block, obj in zip(blocks, listings, strict=True):
            if obj:
                used[obj] = used.get(obj, 0) + 1
                anchor = (
                    listing_id(obj)
                    if used[obj] == 1
                    else f"{listing_id(obj)}-{used[obj]}"
                )
                block["ids"].append(anchor)
    if app.builder.format == "html":
        _link_figure_data(app, doctree, docname)


def _link_figure_data(app: Any, doctree: nodes.document, docname: str) -> None:
    found = _chapter(app, docname)
    if found is None:
        return
    page = docname.rsplit("/", 1)[-1]
    # its folder holds this build's files only
    app.env.temp_data.setdefault("figure_data_pages", set()).add(page)
    summaries = figure_summaries(found[0])
    if not summaries:
        return
    written = app.env.temp_data.setdefault("figure_data", {})
    prefix = "../" * docname.count("/")
    for container in doctree.findall(nodes.container):
        if container.get("nb_element") != "cell_code":
            continue
        key = (container.get("cell_metadata") or {}).get("label") or container.get(
            "exec_count"
        )
        if key not in summaries:
            continue
        label, summary = summaries[key]
        if figure_table(summary) is None:  # a diagram: nothing plotted to download
            continue
        stem = f"_static/figure-data/{page}/{nodes.make_id(label)}"
        written[stem] = summary
        figure = next(iter(container.findall(nodes.figure)), None)
        where = figure if figure is not None else container
        link = nodes.raw(
            "",
            (
                f'<p class="figure-data">Plotted data: <a href="{prefix}{stem}.csv" '
                f'download>CSV</a> · <a href="{prefix}{stem}.json" '
                "download>JSON</a></p>"
            ),
            format="html",
        )
        where.parent.insert(where.parent.index(where) + 1, link)


def write_figure_data(app: Any, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    stems = app.env.temp_data.get("figure_data", {})
    for stem, summary in stems.items():
        target = Path(app.outdir) / stem
        target.parent.mkdir(parents=True, exist_ok=True)
        target.with_suffix(".json").write_text(figure_json(summary), encoding="utf-8")
        target.with_suffix(".csv").write_text(figure_csv(summary), encoding="utf-8")
    # a page written again keeps only its figures' files: a figure gone, renamed or now
    # a diagram leaves none
    kept = {str(Path(stem)) for stem in stems}
    for page in app.env.temp_data.get("figure_data_pages", set()):
        folder = Path(app.outdir) / "_static" / "figure-data" / page
        for old in folder.glob("*.*"):
            if str(old.relative_to(app.outdir).with_suffix("")) not in kept:
                old.unlink()
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()


def page_provenance(
    app: Any, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Append the page's glue provenance (JSON) for book-site.js to show on hover and
    focus."""
    if doctree is None or "body" not in context:
        return
    found = _chapter(app, pagename)
    if found is None:
        return
    nb, entry = found
    data = glue_provenance(
        nb, entry, listings_in((Path(app.srcdir) / f"{pagename}.md").read_text())
    )
    blob = json.dumps(data, sort_keys=True, separators=(",", ":")).replace("</", "<\\/")
    context["body"] += (
        f'<script type="application/json" id="glue-provenance">{blob}</script>'
    )


def scientific_pasted_text(app: Any, doctree: nodes.document, docname: str) -> None:
    """A number glued from another page (``{glue:text}`page.md::key```, which myst-nb
    pastes after the roles have run) in the reader's notation too: 1e-6 as 10⁻⁶, as the
    traced role sets the page's own."""
    from bookbuild.site.notation import set_scientific

    for node in list(doctree.findall(nodes.inline)):
        if "pasted-text" in node["classes"]:
            set_scientific(node)


def setup(app: Any) -> dict[str, Any]:
    from myst_nb.ext.glue.domain import NbGlueDomain

    NbGlueDomain.roles = {**NbGlueDomain.roles, "text": _traced_text_role()}
    app.connect("doctree-resolved", mark_listings)
    app.connect("doctree-resolved", scientific_pasted_text)
    app.connect("html-page-context", page_provenance)
    app.connect("build-finished", write_figure_data)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
