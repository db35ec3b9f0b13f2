"""Backpropagation through time: gradients against lag, truncation, clipping, their
figures and the JAX twin.
"""
