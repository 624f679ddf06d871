"""Optional C extensions beside their Python twins, a change to one made next to the other
(docs/architecture.md says how to add a kernel): the name table (``_names.c``, twin
``names.py``), the token path's kernels (``_kernels.c``, twin ``kernels.py``) and the
byte-context (PPM) counts' (``_ppm.c``, twin ``ppm.py``); the
tokenisers' text scans live in streamnb/features (``_scan.c``, twin ``scan.py``).
``choose.py`` picks the extension or the twins for each."""
