//! Taking in the journals that processes now gone left beside a database: by the next recorder
//! when it starts, and by the reading commands when they open the database.

use std::fs::File;
use std::path::PathBuf;
use std::time::Duration;

use super::Store;
use super::journal::orphans;
use super::journal_reader::JournalReader;
use super::write_tx::WriterConn;
use super::writer_batch::{
    BatchWrite, MAX_BATCH_BYTES, MAX_BATCH_EVENTS, WRITER_BUSY_TIMEOUT, write_batch,
};

/// Writes each journal into the database and removes it; a journal the database will not take
/// now (three failed batches) is left for later. Returns the hops inserted.
pub(super) async fn take_in(db: &mut WriterConn, journals: Vec<(PathBuf, File)>) -> u64 {
    let mut inserted = 0;
    for (path, file) in journals {
        let mut reader = JournalReader::from_file(file);
        let limit = reader.file_len();
        let mut failures = 0;
        while reader.pos < limit && failures < 3 {
            let mut batch = match reader.read(limit, MAX_BATCH_BYTES, MAX_BATCH_EVENTS) {
                Ok(batch) if !batch.events.is_empty() => batch,
                _ => break,
            };
            let work = BatchWrite {
                events: &mut batch.events,
                lost_ends: &[],
                losses: 0,
            };
            match write_batch(db, work).await {
                Ok(done) => {
                    inserted += done.hops_inserted;
                    reader.pos = batch.end;
                }
                Err(error) => {
                    failures += 1;
                    tracing::warn!(%error, journal = %path.display(), "taking in a journal");
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            }
        }
        if failures < 3
            && let Err(error) = std::fs::remove_file(&path)
        {
            tracing::warn!(%error, journal = %path.display(), "removing a taken-in journal");
        }
    }
    inserted
}

/// Takes in the journals that dead processes left beside `store` (a live recorder's journal is
/// locked and left alone). Returns the hops inserted.
pub(crate) async fn take_in_left_journals(store: &Store) -> u64 {
    let journals = orphans(store.path());
    if journals.is_empty() {
        return 0;
    }
    let mut db = WriterConn::new(store, WRITER_BUSY_TIMEOUT);
    let inserted = take_in(&mut db, journals).await;
    db.discard().await;
    inserted
}
