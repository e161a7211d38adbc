//! A hop as the store gives it back (its start, its end once it ended), read by its dialect the
//! first time a view asks and kept with it.

use super::numbering::HopTimes;
use tracer_wire::dialect::{self, HopReading, Reading};
use tracer_wire::hop::{HopEnd, HopStart};

/// A hop as the store gives it back: what was known at its start, and its end once it ended.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedHop {
    pub start: HopStart,
    pub end: Option<HopEnd>,
    /// Its reading and request parts once made (`read_once`): a cache, not part of the record.
    pub read: super::read_once::ReadOnce,
}

/// Reads both bodies of a hop by its dialect (not kept: see [`RecordedHop::reading`]).
pub(crate) fn reading_of(hop: &RecordedHop) -> HopReading {
    dialect::read_hop(&hop.start, hop.end.as_ref())
}

impl RecordedHop {
    /// A hop of these records, not read yet.
    #[cfg(test)]
    pub(crate) fn new(start: HopStart, end: Option<HopEnd>) -> Self {
        Self {
            start,
            end,
            read: super::read_once::ReadOnce::default(),
        }
    }

    /// Both bodies read by the hop's dialect: read the first time, then kept with the hop.
    pub fn reading(&self) -> HopReading {
        self.read_ref().clone()
    }

    /// The hop's reading, as kept (see [`RecordedHop::reading`]).
    pub fn read_ref(&self) -> &HopReading {
        self.read.reading(|| reading_of(self))
    }

    /// What its request body is made of, when it is a model request read as JSON: measured the
    /// first time, then kept.
    pub fn request_parts(&self) -> Option<std::sync::Arc<super::request_parts::RequestParts>> {
        if !matches!(self.read_ref().request.reading, Reading::ModelRequest(_)) {
            return None;
        }
        self.read
            .parts(|| super::request_parts::RequestParts::of(self))
    }

    pub fn times(&self) -> HopTimes {
        HopTimes::of(&self.start, self.end.as_ref())
    }
}
