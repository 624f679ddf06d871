# Doctest collection imports every module; a __main__ module would run its command line.
collect_ignore_glob = ["*/__main__.py"]
