"""Fuzz targets for allegra-lan (issue 9): every path by which bytes enter a peer or a tool.

`fuzz.targets` holds one target per entry point; `fuzz/run.py` runs them under
atheris (coverage-guided), `tests/test_fuzz_properties.py` runs the same
checks under hypothesis in the ordinary test suite. See fuzz/README.md.
"""
