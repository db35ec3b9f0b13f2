"""Executing the chapters: the engine, its kernels' hooks and their event sink,
bytecode, cache keys."""
