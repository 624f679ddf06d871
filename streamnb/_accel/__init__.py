"""The per-record C kernels (``_kernels.c``, built as ``streamnb._accel._kernels``) and their
Python twins with the choice between them (``kernels.py``), side by side so that a change to
one is made next to the other (docs/architecture.md says how to add a kernel)."""
