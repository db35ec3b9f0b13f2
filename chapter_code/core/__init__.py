"""The shared core: the build's runtime (device, seeds, threads, CPU pins), checks,
plotting style, timing and proportions."""
