"""The ``asif-convert`` command line: one module per command group, on top of the library."""
