"""``virtrepro.claims`` is :mod:`virtrepro.analysis.claims` (the verdicts on the papers' claims) under
the name the notebooks, the figures and ``python -m virtrepro.claims`` (the claims_table job) use:
importing this module gives that package itself, so every name of it is reachable here."""

import sys

from .analysis import claims as _claims

if __name__ == "__main__":
    from .cli import run as run_cli

    run_cli(_claims.main)
else:
    sys.modules[__name__] = _claims
