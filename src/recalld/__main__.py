"""``python -m recalld``: the same CLI as the ``recalld`` command."""

from recalld.adapters.cli import main

main()
