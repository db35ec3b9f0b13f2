"""The labs: one module per chapter, each defining ``LAB``; :mod:`bookbuild.labs` turns
them into notebooks.
"""
