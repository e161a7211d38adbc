//! Grouping hops into traces as they arrive, run beside a recording (tracer-live's work, which
//! tracer-record may not name): every capture path but `tracer wrap` starts it.

use std::time::Duration;

use tracer_live::correlate::{group_last_hops, group_until};
use tracer_record::recording::{Beside, LastStep};

/// Groups new hops every `period` while recording; once every hop is written, groups the last
/// ones with the same live grouper.
pub fn grouping(period: Duration) -> Beside {
    Beside::then_last_step(
        "grouping the last hops into traces",
        move |store, stop| async move {
            let live = group_until(store.clone(), period, stop).await;
            LastStep::new(async move { group_last_hops(&store, Some(live)).await.map(drop) })
        },
    )
}
