"""Gated memory: the LSTM and GRU cells, the memory test, its grid and robustness sweep,
their figures.
"""
