"""Beyond the single carried state: sequence to sequence, gates outside recurrence,
parallel scans, classification.
"""
