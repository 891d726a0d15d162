"""``python -m ferry_operator``: the operator process (see ``ferry_operator.main``)."""

from ferry_operator.main import main

main()
