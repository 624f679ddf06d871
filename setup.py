"""Build of the optional C kernels (metadata lives in pyproject.toml).

The extension is optional: without a C compiler the install still succeeds and streamnb uses
the Python twins in streamnb/_accel/kernels.py (same results, slower one-record path).
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("streamnb._accel._kernels", ["streamnb/_accel/_kernels.c"],
                             optional=True, extra_compile_args=["-O3"])])
