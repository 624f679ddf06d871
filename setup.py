"""Build of the optional C extensions (metadata lives in pyproject.toml).

Each extension is optional: without a C compiler the install still succeeds and streamnb uses
its Python twin module instead (same results, slower one-record path): the name table
(streamnb/_accel/_names.c, twin names.py), the token kernels (streamnb/_accel/_kernels.c,
twin kernels.py), the tokenisers' text scans (streamnb/features/_scan.c, twin scan.py) and the
byte-context (PPM) counts (streamnb/_accel/_ppm.c, twin ppm.py).
"""

from setuptools import Extension, setup


def _optional(name: str, source: str, depends: tuple[str, ...] = ()) -> Extension:
    # no fused multiply-adds (a default where the CPU has them): the kernels must round as
    # their Python twins do
    return Extension(name, [source], depends=list(depends), optional=True,
                     extra_compile_args=["-O3", "-ffp-contract=off"])


setup(ext_modules=[
    _optional("streamnb._accel._names", "streamnb/_accel/_names.c", ("streamnb/_accel/_names.h",)),
    _optional("streamnb._accel._kernels", "streamnb/_accel/_kernels.c",
              ("streamnb/_accel/_names.h",)),
    _optional("streamnb.features._scan", "streamnb/features/_scan.c"),
    _optional("streamnb._accel._ppm", "streamnb/_accel/_ppm.c"),
])
