"""The code the book teaches, one package per topic, each module imported by the pages
that use it.

Packages: ``core`` (what a chapter calls first: device, seeds, threads; checks, the
plotting style), ``rnn`` (the recurrence by hand), ``bptt`` (gradients through time),
``gated`` (LSTM and GRU), ``lm`` (language models), ``sampling`` (generating text),
``depth`` (stacks, directions, the scoreboard), ``beyond`` (encoder-decoders, attention,
parallel recurrences), ``corpora`` (the texts) and ``panels`` (the interactive panels).
All tensors are batch-first: (batch, time, features).
"""
