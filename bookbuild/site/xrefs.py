"""Cross-references of a partial build (``build --only``) resolved from the last full
build.

A full HTML build writes ``xrefs.json`` beside its pages: every label
(``(name)=``, ``:label:``, ``:name:``) with its page, anchor, title and number,
every numbered equation with its number, and every page's title. A build of
some pages only (:func:`bookbuild.build.build_only`) leaves the other pages
out, neither executed nor rendered; this extension resolves a ``{ref}``,
``{numref}``, ``{eq}`` or ``{doc}`` to one of them from that file, as a link
into the full build's HTML with the text the full build would show (Sphinx's
own ``objects.inv`` has no equations or figure numbers, hence a file of our
own). The partial build names the file in ``bookbuild_xref_inventory`` and the
full build's HTML folder in ``bookbuild_xref_base``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from docutils import nodes

INVENTORY = "xrefs.json"
# inventory path -> its contents, read once per build
_loaded: dict[str, dict[str, Any]] = {}


def inventory(app: Any) -> dict[str, Any]:
    """What the pages of this build define that another page can refer to."""
    env, builder = app.env, app.builder
    labels = {}
    std = env.get_domain("std")
    fignumbers = env.toc_fignumbers
    for name, (docname, anchor, title) in std.labels.items():
        entry = {
            "doc": docname,
            "uri": builder.get_target_uri(docname),
            "anchor": anchor,
            "title": str(title),
        }
        for figtype, numbers in fignumbers.get(docname, {}).items():
            if anchor in numbers:
                entry.update(
                    figtype=figtype, number=".".join(map(str, numbers[anchor]))
                )
        labels[name] = entry
    for name, (docname, anchor) in std.anonlabels.items():
        entry = labels.setdefault(
            name,
            {
                "doc": docname,
                "uri": builder.get_target_uri(docname),
                "anchor": anchor,
                "title": "",
            },
        )
        for figtype, numbers in fignumbers.get(docname, {}).items():
            if anchor in numbers and "number" not in entry:
                entry.update(
                    figtype=figtype, number=".".join(map(str, numbers[anchor]))
                )
    equations = {}
    for name, (docname, number) in env.get_domain("math").equations.items():
        anchor = nodes.make_id(f"equation-{name}")
        numbers = fignumbers.get(docname, {}).get("displaymath", {}).get(anchor)
        eqno = (
            app.config.math_numsep.join(".".join(map(str, numbers)).rsplit(".", 1))
            if numbers
            else str(number)
        )
        equations[name] = {
            "doc": docname,
            "uri": builder.get_target_uri(docname),
            "anchor": anchor,
            "number": eqno,
        }
    docs = {
        d: {
            "uri": builder.get_target_uri(d),
            "title": env.titles[d].astext() if d in env.titles else d,
        }
        for d in env.found_docs
    }
    return {"labels": labels, "equations": equations, "docs": docs}


def _write_inventory(app: Any, exception: Exception | None) -> None:
    if (
        exception is None
        and app.builder.format == "html"
        and not app.config.bookbuild_xref_inventory
    ):
        (Path(app.outdir) / INVENTORY).write_text(
            json.dumps(inventory(app), indent=1, sort_keys=True) + "\n"
        )


def _text(app: Any, kind: str, entry: dict[str, Any]) -> str:
    if kind == "eq":
        return (app.config.math_eqref_format or "({number})").format(
            number=entry["number"]
        )
    if kind == "numref" and "number" in entry:
        form = app.config.numfig_format.get(entry.get("figtype", ""), "%s")
        return (
            form % entry["number"]
            if "%s" in form
            else form.format(number=entry["number"])
        )
    return entry.get("title") or entry.get("anchor", "")


def _resolve(app: Any, env: Any, node: Any, contnode: Any) -> Any:
    path = app.config.bookbuild_xref_inventory
    if not path:
        return None
    if path not in _loaded:
        _loaded[path] = json.loads(Path(path).read_text())
    known = _loaded[path]
    kind, target = node.get("reftype"), node.get("reftarget", "")
    if kind == "eq":
        entry = known["equations"].get(target)
    elif kind == "doc":
        docname = target.removeprefix("/").removesuffix(".md")
        # relative to the referring page's folder, as Sphinx resolves it
        if not target.startswith("/"):
            folder = node.get("refdoc", "").rpartition("/")[0]
            docname = f"{folder}/{docname}" if folder else docname
        entry = known["docs"].get(docname)
        entry = None if entry is None else {**entry, "anchor": ""}
    elif kind in ("ref", "numref"):
        entry = known["labels"].get(target.lower()) or known["labels"].get(target)
    else:
        return None
    if entry is None:
        return None
    uri = (
        app.config.bookbuild_xref_base.rstrip("/")
        + "/"
        + entry["uri"]
        + (f"#{entry['anchor']}" if entry["anchor"] else "")
    )
    explicit = node.get("refexplicit") and kind != "numref"
    if kind == "numref" and node.get("refexplicit"):
        title = contnode.astext()
        text = title.replace("{number}", entry.get("number", "")).replace(
            "%s", entry.get("number", "")
        )
    else:
        text = contnode.astext() if explicit else _text(app, kind, entry)
    reference = nodes.reference(
        "", "", internal=False, refuri=uri, reftitle=entry.get("title", "")
    )
    reference += nodes.inline(text, text, classes=["xref", "bookbuild-full-build"])
    return reference


def setup(app: Any) -> dict[str, Any]:
    from bookbuild.execute import cachekey

    # myst-nb's lookup of the engine's stored outputs must hash as the engine does
    # (bookbuild.execute.cachekey); every book the engine builds loads this extension
    # (`--only` needs it), the site's extension too
    cachekey.install()
    app.add_config_value("bookbuild_xref_inventory", "", "env")
    app.add_config_value("bookbuild_xref_base", "", "env")
    app.connect("build-finished", _write_inventory)
    app.connect(
        "missing-reference",
        lambda app, env, node, contnode: _resolve(app, env, node, contnode),
    )
    return {"parallel_read_safe": True, "parallel_write_safe": True}
