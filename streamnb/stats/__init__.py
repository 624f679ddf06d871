"""Sufficient statistics: domains, counts and moments (the bottom layer; imports nothing above)."""

from streamnb.stats.counts import CountStatistics
from streamnb.stats.domain import Domain
from streamnb.stats.encoded import EncodedBatch
from streamnb.stats.moments import Moments
from streamnb.stats.persist import StateFileError, read_state, write_state
from streamnb.stats.reservoir import Reservoir
from streamnb.stats.schema import InvalidRecord, RecordName, Schema

__all__ = ["CountStatistics", "Domain", "EncodedBatch", "InvalidRecord", "Moments",
           "RecordName", "Reservoir", "Schema", "StateFileError", "read_state", "write_state"]
