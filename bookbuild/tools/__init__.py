"""Developer tools: the benchmarks, the GPU run, the live preview, the environment, the
labs."""
