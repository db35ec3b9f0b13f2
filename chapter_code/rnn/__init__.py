"""The vanilla recurrence (Chapter "Recurrence"): the Elman cell written out, its JAX
twin, and its diagram.
"""
