"""Depth, direction and scale: stacked and bidirectional layers, the scoreboard and the
scale study.
"""
