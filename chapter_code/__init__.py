"""The code the book teaches: one module per topic, each imported by the pages that use
it.

Modules: ``runtime`` (device, seeds, threads, build fingerprint), ``recurrence``
(the vanilla RNN by hand), ``figures`` (the book's plotting style and diagrams).
All tensors are batch-first: (batch, time, features).
"""
