//! Stage 7, store: files written so that no result is ever lost (staged, renamed into place in
//! one step, never overwritten), the outbox's folders, and traces. Imports the stages before it.

pub mod outdir;
pub mod output;
pub mod traces;
