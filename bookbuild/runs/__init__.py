"""Runs and sweeps: memoized runs, keys on definitions, sweep jobs and records, a local
Slurm."""
