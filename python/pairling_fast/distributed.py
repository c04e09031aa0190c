"""``pairling_fast.distributed``, the documented import path of the cluster check
(``from pairling_fast import distributed``; ``docs/cluster.md``): the code is the journal
package's ``journal.cluster``, where the rest of the journal check lives."""

from __future__ import annotations

from .journal.cluster import (
    CONNECT_TIMEOUT,
    DEFAULT_CHUNK_BYTES,
    JOURNAL_SUFFIXES,
    ClusterError,
    check_journal,
    check_journal_on_cluster,
    check_journal_paths_on_cluster,
    check_paths,
    check_workers,
    chunk_ranges,
    connect,
    journal_files,
    journal_reports,
)

__all__ = [
    "CONNECT_TIMEOUT",
    "DEFAULT_CHUNK_BYTES",
    "JOURNAL_SUFFIXES",
    "ClusterError",
    "check_journal",
    "check_journal_on_cluster",
    "check_journal_paths_on_cluster",
    "check_paths",
    "check_workers",
    "chunk_ranges",
    "connect",
    "journal_files",
    "journal_reports",
]
