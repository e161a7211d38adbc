//! A hop as the store gives it back (its start, its end once it ended), read by its dialect the
//! first time a view asks and kept with it; a trace's hops read once, their texts shared
//! (`read_into`, `read_all`), and a large request body let go of once read.

use super::numbering::HopTimes;
use super::read_once::{LET_GO_BYTES, SharedTexts};
use tracer_wire::dialect::{self, HopReading, Reading};
use tracer_wire::hop::{HopEnd, HopStart, Role};

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

/// Reads a hop as one of a trace's (its texts shared with the hops read before), and measures
/// its request when it is a model request.
pub fn read_into(hop: &RecordedHop, shared: &mut SharedTexts) {
    hop.read.reading(|| {
        let mut reading = reading_of(hop);
        shared.share(&mut reading);
        reading
    });
    if matches!(hop.read_ref().request.reading, Reading::ModelRequest(_)) {
        hop.request_parts();
    }
}

/// Lets go of a model request's body once it is read and measured (see [`read_into`]), when it
/// is large: what every view but the body itself needs of it is kept in the reading and parts.
/// Hops of your requests to a host and of other kinds keep their bodies.
pub fn let_go_of_request_body(hop: &mut RecordedHop) {
    let is_model_request = matches!(hop.read_ref().request.reading, Reading::ModelRequest(_));
    if hop.start.role == Role::Agent || !is_model_request || !hop.read.has_parts() {
        return;
    }
    if let Some(end) = hop.end.as_mut()
        && end.request_body.bytes.len() >= LET_GO_BYTES
    {
        end.request_body.bytes = Vec::new();
    }
}

/// Reads every hop of a trace, their texts shared (see [`read_into`]).
pub fn read_all(hops: &[RecordedHop]) {
    let mut shared = SharedTexts::default();
    for hop in hops {
        read_into(hop, &mut shared);
    }
}
