"""Recurrent language models: perplexity, the character model and its trainer, n-gram
baselines, the fair comparison.
"""
