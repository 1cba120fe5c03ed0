"""Benchmarks of the offline plan (run by `make bench`, never by the test suite)."""
