"""Compiled Cython kernels (built by setup.py; see each .pyx for its conventions)."""
