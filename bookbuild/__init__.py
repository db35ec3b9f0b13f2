"""The machinery that builds and checks the book (not the code the book teaches).

``python -m bookbuild build|clean|serve``; ``venv.py`` creates the environment
with the standard library alone, before any of this can be imported.
"""
