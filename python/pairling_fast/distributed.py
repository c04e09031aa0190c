"""``pairling_fast.distributed``, the documented import path of the cluster check
(``from pairling_fast import distributed``; ``docs/cluster.md``): the code is the journal
package's ``journal.cluster``, where the rest of the journal check lives; this module exports its
``__all__``."""

from __future__ import annotations

from .journal.cluster import *  # noqa: F403
from .journal.cluster import __all__ as __all__
