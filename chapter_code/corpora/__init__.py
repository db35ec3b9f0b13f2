"""The texts the language models read, built from pinned package archives and checked by
hash.
"""
