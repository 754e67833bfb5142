"""``python -m asif_convert``: the command line, as the ``asif-convert`` script runs it."""

from asif_convert._cli.app import run

run()
