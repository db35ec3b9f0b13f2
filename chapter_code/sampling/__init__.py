"""Generating text: decoding rules, measured properties of samples, counting checks, the
sampling explorer.
"""
