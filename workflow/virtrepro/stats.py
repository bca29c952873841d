"""``virtrepro.stats`` is :mod:`virtrepro.analysis.stats` (intervals and comparisons) under the name the
notebooks, the figures and the measurement's repetition rule use: importing this module gives that
package itself, so every name of it is reachable here."""

import sys

from .analysis import stats as _stats

sys.modules[__name__] = _stats
