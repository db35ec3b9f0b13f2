"""The labs: one module per chapter, each defining ``LAB``;
:mod:`bookbuild.tools.labs` turns them into notebooks.
"""
