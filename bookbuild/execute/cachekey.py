"""Which cell metadata keys a chapter's executed outputs: only what can change its
execution.

jupyter-cache finds a page's stored outputs by a hash of its code cells, and by
default that hash covers every key of every cell's metadata: a figure's caption
or alt text (``mystnb.figure``, ``mystnb.image``), a cell's label or the gate's
comparison options. Edit a caption and the hash moves, so the page runs again,
and myst-nb would run it itself if the engine had not. :func:`install` makes
the hash cover only :data:`EXECUTION_KEYS` (the tags, which hold
``raises-exception`` and ``skip-execution``), in every process that hashes: the
engine (:func:`bookbuild.execute.engine.code_hash`, its store and its lookups) and
Sphinx (myst-nb's lookup, through :mod:`bookbuild.site`). Captions, alt text,
labels and options are read from the page as it stands when it renders (the
merge of stored outputs into the page keeps the page's metadata, where
jupyter-cache's default would hand back the stored cells' metadata), and the
gate compares the options with the baseline (``@options``); they just no longer
re-execute it.

Pages: none (the build's machinery).
"""

from __future__ import annotations

import functools
from typing import Any

#: Cell metadata keys whose value can change what a cell computes or whether it runs.
EXECUTION_KEYS = ("tags",)
_MARK = "_bookbuild_execution_keys"


def install() -> None:
    """Make jupyter-cache hash only :data:`EXECUTION_KEYS` of each cell's metadata,
    unless a caller names its own (idempotent)."""
    from jupyter_cache.cache.main import JupyterCacheBase

    original = JupyterCacheBase.create_hashed_notebook
    if getattr(original, _MARK, False):
        return

    @functools.wraps(original)
    def hashed(
        self: Any,
        nb: Any,
        nb_metadata: Any = ("kernelspec",),
        cell_metadata: Any = EXECUTION_KEYS,
    ) -> Any:
        return original(self, nb, nb_metadata=nb_metadata, cell_metadata=cell_metadata)

    merge = JupyterCacheBase.merge_match_into_notebook

    @functools.wraps(merge)
    def merged(
        self: Any,
        nb: Any,
        nb_meta: Any = ("kernelspec", "language_info", "widgets"),
        cell_meta: Any = (),
    ) -> Any:
        # jupyter-cache's default (None) hands back the stored cells whole, metadata of
        # the run included: a caption edited since would render as it was. () keeps the
        # page's own metadata, outputs from the store.
        return merge(self, nb, nb_meta=nb_meta, cell_meta=cell_meta)

    setattr(hashed, _MARK, True)
    JupyterCacheBase.create_hashed_notebook = hashed  # type: ignore[method-assign]
    JupyterCacheBase.merge_match_into_notebook = merged  # type: ignore[method-assign]
