"""``python -m benchmarks`` (``make bench``): speed and memory, measured side by side.

Timings on shared 2-core machines are noisy, so every speed figure is a ratio of two
things timed alternately in one run (median over repetitions); absolute times are only
reported where the issue asks for a budget, labelled with the machine.
"""
