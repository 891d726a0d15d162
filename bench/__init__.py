"""Benchmarks: ferry, pgqueuer and procrastinate on the same workloads, side by side.

Run ``python -m bench`` (or ``make bench``); ``--quick`` shrinks every workload for a
smoke check. Figures are printed and written to ``bench/README.md``, never asserted.
"""
