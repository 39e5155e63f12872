//! `--ray [ADDRESS]`: the runs of `run` and `reproduce` made on a Ray cluster through the Python
//! package's helper (`python -m smpsched.cluster`), which this command starts and talks to over
//! pipes; the lab merges what comes back so every file written is the local run's, byte for
//! byte (see `smpsched_lab::exec::shard`).
//!
//! Frames both ways are a 4-byte big-endian length and the bytes. To the helper: a JSON header
//! (`address`, `bundles`, `tasks` as `[bundle, point, repetition]`), then each bundle. From it:
//! a JSON header per event (`cluster`, a finished task `i` with `ok`, `done`, or `fatal`),
//! followed by the run's bytes when a task succeeded.

use std::io::{BufReader, BufWriter, Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use indicatif::ProgressBar;
use serde_json::{json, Value};
use smpsched_lab::exec::shard::{Remote, Task, TaskFailure};
use smpsched_lab::{InputError, LabError};

/// The interpreter that runs the helper, unless `SMPSCHED_PYTHON` names another.
const PYTHON: &str = "python3";

/// A Ray cluster reached through the Python helper.
pub struct Ray {
    /// The cluster's address; `None`: `RAY_ADDRESS`, else a local instance.
    pub address: Option<String>,
    /// Whether to show a progress bar.
    pub quiet: bool,
}

/// A cluster that failed once it was reached (lost mid-sweep, its workers crashing past their
/// retries): not bad input, so exit 1, naming the flag.
fn cluster_lost(message: String) -> LabError {
    LabError::Internal(format!("--ray: {message}"))
}

/// How the helper's answers ended.
enum Ending {
    /// `done`, with every run back.
    Complete,
    /// The stream ended early, after the cluster answered (`true`) or before, with the runs back
    /// until then.
    Cut { connected: bool, finished: usize },
}

/// A `--ray` problem: bad input (exit 2) naming the flag.
pub(crate) fn ray_error(message: String) -> LabError {
    LabError::Input(Box::new(InputError {
        file: PathBuf::from("--ray"),
        line: None,
        field: String::new(),
        message,
    }))
}

fn write_frame(w: &mut impl Write, bytes: &[u8]) -> std::io::Result<()> {
    let n = u32::try_from(bytes.len()).map_err(|_| std::io::Error::other("a frame over 4 GiB"))?;
    w.write_all(&n.to_be_bytes())?;
    w.write_all(bytes)
}

/// The next frame, or `None` at the end of the stream.
fn read_frame(r: &mut impl Read) -> std::io::Result<Option<Vec<u8>>> {
    let mut head = [0u8; 4];
    match r.read_exact(&mut head) {
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        other => other?,
    }
    let mut body = vec![0u8; u32::from_be_bytes(head) as usize];
    r.read_exact(&mut body)?;
    Ok(Some(body))
}

impl Ray {
    /// The cluster `--ray` names (an empty address: `RAY_ADDRESS` or a local instance).
    pub fn new(address: String, quiet: bool) -> Self {
        Ray {
            address: Some(address).filter(|a| !a.trim().is_empty()),
            quiet,
        }
    }

    fn start(&self, python: &str) -> Result<Child, LabError> {
        Command::new(python)
            .args(["-m", "smpsched.cluster"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| {
                ray_error(format!(
                    "cannot start `{python}` ({e}); --ray runs through the Python package: \
                     pip install './crates/py[ray]' into a Python 3.9+ and name it with \
                     SMPSCHED_PYTHON"
                ))
            })
    }

    /// The helper's answers until `done`, each task's result handed to `done_task`.
    fn answers(
        &self,
        out: &mut impl Read,
        total: usize,
        done_task: &mut dyn FnMut(usize, Result<Vec<u8>, TaskFailure>) -> Result<(), LabError>,
    ) -> Result<Ending, LabError> {
        let bar = if self.quiet {
            ProgressBar::hidden()
        } else {
            crate::progress_bar(total, false)
        };
        let io = |e: std::io::Error| ray_error(format!("the helper's answer broke off: {e}"));
        let (mut finished, mut connected) = (0, false);
        while let Some(frame) = read_frame(out).map_err(io)? {
            let head: Value = serde_json::from_slice(&frame)
                .map_err(|e| ray_error(format!("the helper answered garbage: {e}")))?;
            if let Some(c) = head.get("cluster") {
                connected = true;
                bar.set_message(format!("on Ray ({} CPUs)", c["cpus"]));
            } else if let Some(why) = head.get("fatal") {
                bar.finish_and_clear();
                let why = why.as_str().unwrap_or("");
                return Err(if connected {
                    cluster_lost(format!(
                        "the Ray cluster failed after {finished} of {total} runs came back \
                         (nothing was written): {why}"
                    ))
                } else {
                    ray_error(format!("cannot use the Ray cluster: {why}"))
                });
            } else if head.get("done").is_some() {
                bar.finish_and_clear();
                return Ok(if finished == total {
                    Ending::Complete
                } else {
                    Ending::Cut {
                        connected,
                        finished,
                    }
                });
            } else if let Some(i) = head.get("i").and_then(Value::as_u64) {
                let result = if head["ok"] == json!(true) {
                    Ok(read_frame(out).map_err(io)?.unwrap_or_default())
                } else {
                    Err(TaskFailure {
                        code: head["code"].as_u64().map_or(1, |c| c.min(255) as u8),
                        message: head["message"].as_str().unwrap_or("").to_string(),
                    })
                };
                done_task(i as usize, result)?;
                finished += 1;
                bar.set_position(finished as u64);
            }
        }
        bar.finish_and_clear();
        Ok(Ending::Cut {
            connected,
            finished,
        })
    }
}

impl Remote for Ray {
    fn run(
        &self,
        bundles: &[Vec<u8>],
        tasks: &[(usize, Task)],
        done: &mut dyn FnMut(usize, Result<Vec<u8>, TaskFailure>) -> Result<(), LabError>,
    ) -> Result<(), LabError> {
        let python = std::env::var("SMPSCHED_PYTHON").unwrap_or_else(|_| PYTHON.to_string());
        let mut child = self.start(&python)?;
        let header = json!({
            "address": self.address,
            "bundles": bundles.len(),
            "tasks": tasks.iter().map(|(b, t)| json!([b, t.point, t.repetition])).collect::<Vec<_>>(),
        });
        let sent = (|| -> std::io::Result<()> {
            let mut w = BufWriter::new(
                child
                    .stdin
                    .take()
                    .ok_or_else(|| std::io::Error::other("no stdin"))?,
            );
            write_frame(&mut w, header.to_string().as_bytes())?;
            for b in bundles {
                write_frame(&mut w, b)?;
            }
            w.flush()
        })();
        let mut out = BufReader::new(child.stdout.take().expect("stdout is piped"));
        let ending = match sent {
            Ok(()) => self.answers(&mut out, tasks.len(), done),
            Err(_) => Ok(Ending::Cut {
                connected: false,
                finished: 0,
            }),
        };
        if ending.is_err() {
            let _ = child.kill();
        }
        let status = child
            .wait()
            .map_err(|e| ray_error(format!("waiting for the helper: {e}")))?;
        match ending? {
            Ending::Complete => Ok(()),
            Ending::Cut {
                connected: true,
                finished,
            } => Err(cluster_lost(format!(
                "the Ray cluster was lost after {finished} of {} runs came back (the helper \
                 ended: {status}; Ray's messages are above); nothing was written",
                tasks.len()
            ))),
            Ending::Cut { .. } => Err(ray_error(format!(
                "`{python} -m smpsched.cluster` ended ({status}) before it reached the cluster; \
                 --ray needs the smpsched Python package with Ray in that Python \
                 (pip install './crates/py[ray]'; SMPSCHED_PYTHON names the interpreter)"
            ))),
        }
    }
}

/// Checks `--ray`'s address before anything runs: empty (`RAY_ADDRESS`, or a cluster on this
/// machine), `auto`, `local`, or `HOST:PORT` (`ray://HOST:PORT` too). A bare word is most often
/// the paper or file `--ray` took as its address (`reproduce --ray black90`).
pub fn check_address(address: &str) -> Result<(), LabError> {
    let a = address.trim();
    let port = a.rsplit_once(':').map(|(_, p)| p);
    if a.is_empty()
        || a == "auto"
        || a == "local"
        || port.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    {
        return Ok(());
    }
    Err(ray_error(format!(
        "`{a}` is not a Ray address (HOST:PORT, ray://HOST:PORT or auto); for RAY_ADDRESS or a \
         cluster started on this machine, give --ray last or as --ray= (`smpsched reproduce \
         black90 --ray`)"
    )))
}

#[cfg(test)]
mod tests {
    use super::check_address;

    #[test]
    fn an_address_is_empty_auto_or_ends_in_a_port() {
        for ok in [
            "",
            "auto",
            "local",
            "127.0.0.1:6379",
            "ray://head:10001",
            "[::1]:6379",
        ] {
            assert!(check_address(ok).is_ok(), "{ok}");
        }
        for bad in [
            "black90",
            "experiments/quickstart.toml",
            "head:",
            "head:port",
        ] {
            let e = check_address(bad).unwrap_err().to_string();
            assert!(e.contains("is not a Ray address"), "{bad}: {e}");
        }
    }
}
