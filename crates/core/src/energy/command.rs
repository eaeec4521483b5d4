//! `cmd:PROGRAM [ARGS...]`: energy from an external meter program (a lab power meter's reader,
//! a smart plug, a board management controller), over its stdin and stdout.
//!
//! # Protocol
//!
//! replay starts `PROGRAM` directly with `ARGS` (no shell: the words of the `--energy` value
//! after `cmd:`, split on whitespace), with stdin and stdout as pipes; stderr is kept for error
//! messages. Then, one exchange per reading:
//!
//! 1. replay writes the line `read\n` to the program's stdin;
//! 2. the program answers with one JSON object on one line of stdout:
//!    `{"joules": <cumulative energy, f64>, "timestamp": <seconds, f64>}`
//!    - `joules` is the energy since any fixed origin (the program's start, say); it must never
//!      go down. Only differences between readings are used.
//!    - `timestamp` is the time of the reading in seconds on the program's own clock (any
//!      origin); replay checks it is a finite number and times windows with its own clock.
//!    - optional fields, read from the first answer: `"update_period_s"` (how often the meter's
//!      value changes; default 0.01 s, used to size measurement windows), `"resolution_j"`
//!      (its energy step), `"method"` (`"counter"`, the default, or `"sampled_power"`) and
//!      `"name"` (for reports). Unknown fields are ignored.
//!
//! Empty lines are skipped; anything else that is not such an object is an error that quotes
//! the line.
//!
//! replay reads once when it starts the probe, to check the program speaks the protocol.
//! When done it writes `quit\n` and closes stdin; a program still running 1 s later is
//! killed. An answer must come within 5 s; a program that exits, or closes stdout, before
//! answering is an error that quotes the end of its stderr. After a failed exchange the
//! program is not asked again (every later read is an error at once): an answer that came
//! late would otherwise be taken for the answer to the next `read`.
//!
//! A complete meter that integrates a constant 42 W (Python):
//!
//! ```python
//! #!/usr/bin/env python3
//! import json, sys, time
//! start = time.monotonic()
//! for line in sys.stdin:
//!     if line.strip() == "read":
//!         now = time.monotonic()
//!         print(json.dumps({"joules": 42.0 * (now - start), "timestamp": now}), flush=True)
//!     elif line.strip() == "quit":
//!         break
//! ```

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::{EnergyError, EnergyProbe, Method, ProbeResolution};

/// How long replay waits for an answer to `read`.
pub const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a program has to exit after `quit` before it is killed.
pub const QUIT_GRACE: Duration = Duration::from_secs(1);
/// The update period assumed when the program does not declare one.
pub const DEFAULT_UPDATE_PERIOD_S: f64 = 0.01;
/// How much of the program's stderr is kept for error messages.
const STDERR_TAIL_BYTES: usize = 2048;
/// How much of a bad line is quoted.
const QUOTED_LINE_CHARS: usize = 300;

/// One answer line.
#[derive(Debug, Deserialize)]
struct Reply {
    joules: f64,
    timestamp: f64,
    #[serde(default)]
    update_period_s: Option<f64>,
    #[serde(default)]
    resolution_j: Option<f64>,
    #[serde(default)]
    method: Option<Method>,
    #[serde(default)]
    name: Option<String>,
}

/// A running meter program.
pub struct CommandProbe {
    /// `PROGRAM ARGS...` as given, for messages.
    display: String,
    /// The name the program declared, if any.
    declared_name: Option<String>,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<std::io::Result<String>>,
    stderr_tail: Arc<Mutex<Vec<u8>>>,
    timeout: Duration,
    resolution: ProbeResolution,
    method: Method,
    last_joules: Option<f64>,
    /// The first failed exchange, after which the program is not asked again.
    failed: Option<String>,
}

impl CommandProbe {
    /// Starts the program and reads once; answers must come within 5 s.
    pub fn spawn(program: &str, args: &[String]) -> Result<CommandProbe, EnergyError> {
        CommandProbe::spawn_with_timeout(program, args, DEFAULT_READ_TIMEOUT)
    }

    /// [`CommandProbe::spawn`] with another answer timeout.
    pub fn spawn_with_timeout(
        program: &str,
        args: &[String],
        timeout: Duration,
    ) -> Result<CommandProbe, EnergyError> {
        let display = std::iter::once(program)
            .chain(args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ");
        let start_error = |message: String| EnergyError::CommandStart {
            program: display.clone(),
            message,
        };
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => start_error(format!("program not found ({e})")),
                std::io::ErrorKind::PermissionDenied => {
                    start_error(format!("not executable ({e})"))
                }
                _ => start_error(e.to_string()),
            })?;
        let (stdin, stdout, stderr) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take());
        let (Some(stdin), Some(stdout), Some(stderr)) = (stdin, stdout, stderr) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(start_error(
                "its stdin, stdout or stderr could not be opened as a pipe".into(),
            ));
        };

        // Lines arrive through a channel so that a read can time out.
        let (tx, lines) = mpsc::channel();
        thread::Builder::new()
            .name("energy-meter-stdout".into())
            .spawn(move || {
                let mut reader = BufReader::new(stdout);
                loop {
                    let mut line = String::new();
                    match reader.read_line(&mut line) {
                        Ok(0) => break,
                        Ok(_) => {
                            if tx.send(Ok(line)).is_err() {
                                break;
                            }
                        }
                        Err(e) => {
                            let _ = tx.send(Err(e));
                            break;
                        }
                    }
                }
            })
            .map_err(|e| start_error(format!("cannot start a thread to read its output: {e}")))?;
        let stderr_tail = Arc::new(Mutex::new(Vec::new()));
        let tail = Arc::clone(&stderr_tail);
        thread::Builder::new()
            .name("energy-meter-stderr".into())
            .spawn(move || {
                let mut stderr = stderr;
                let mut buf = [0u8; 1024];
                while let Ok(n) = stderr.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    if let Ok(mut t) = tail.lock() {
                        t.extend_from_slice(&buf[..n]);
                        let excess = t.len().saturating_sub(STDERR_TAIL_BYTES);
                        t.drain(..excess);
                    }
                }
            })
            .map_err(|e| start_error(format!("cannot start a thread to read its stderr: {e}")))?;

        let mut probe = CommandProbe {
            display,
            declared_name: None,
            child,
            stdin: Some(stdin),
            lines,
            stderr_tail,
            timeout,
            resolution: ProbeResolution {
                update_period_s: DEFAULT_UPDATE_PERIOD_S,
                joules: None,
            },
            method: Method::Counter,
            last_joules: None,
            failed: None,
        };
        let first = probe.exchange()?;
        if let Some(p) = first.update_period_s {
            if !(p.is_finite() && p > 0.0) {
                return Err(probe.bad_reply(
                    &format!("update_period_s={p}"),
                    "update_period_s must be a positive number of seconds",
                ));
            }
            probe.resolution.update_period_s = p;
        }
        probe.resolution.joules = first.resolution_j.filter(|j| j.is_finite() && *j > 0.0);
        probe.method = first.method.unwrap_or(Method::Counter);
        probe.declared_name = first.name.filter(|n| !n.trim().is_empty());
        probe.last_joules = Some(first.joules);
        Ok(probe)
    }

    /// Sends `read` and waits for one valid answer; after a failure, fails at once.
    fn exchange(&mut self) -> Result<Reply, EnergyError> {
        if let Some(first) = &self.failed {
            return Err(EnergyError::CommandAbandoned {
                program: self.display.clone(),
                first: first.clone(),
            });
        }
        let answer = self.ask();
        if let Err(e) = &answer {
            self.failed = Some(e.to_string());
        }
        answer
    }

    /// One `read` exchange.
    fn ask(&mut self) -> Result<Reply, EnergyError> {
        let sent = match self.stdin.as_mut() {
            Some(stdin) => write_line(stdin, b"read\n"),
            None => Err(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "stdin closed",
            )),
        };
        if sent.is_err() {
            return Err(self.exited());
        }
        let deadline = Instant::now() + self.timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(left) {
                Ok(Ok(line)) => line,
                Ok(Err(e)) => {
                    return Err(EnergyError::CommandBadReply {
                        program: self.display.clone(),
                        line: String::new(),
                        reason: format!("its output could not be read as text: {e}"),
                    })
                }
                Err(RecvTimeoutError::Disconnected) => return Err(self.exited()),
                Err(RecvTimeoutError::Timeout) => {
                    return Err(EnergyError::CommandTimeout {
                        program: self.display.clone(),
                        seconds: self.timeout.as_secs_f64(),
                    })
                }
            };
            let text = line.trim();
            if text.is_empty() {
                continue;
            }
            let reply: Reply = serde_json::from_str(text).map_err(|e| {
                self.bad_reply(
                    text,
                    &format!("expected {{\"joules\": <number>, \"timestamp\": <number>}} ({e})"),
                )
            })?;
            if !reply.joules.is_finite() || !reply.timestamp.is_finite() {
                return Err(self.bad_reply(text, "joules and timestamp must be finite numbers"));
            }
            return Ok(reply);
        }
    }

    fn bad_reply(&self, line: &str, reason: &str) -> EnergyError {
        let mut quoted: String = line.chars().take(QUOTED_LINE_CHARS).collect();
        if line.chars().count() > QUOTED_LINE_CHARS {
            quoted.push_str("...");
        }
        EnergyError::CommandBadReply {
            program: self.display.clone(),
            line: quoted,
            reason: reason.to_string(),
        }
    }

    /// The error for a program that is gone: its exit status (waiting briefly for it) and the
    /// end of its stderr.
    fn exited(&mut self) -> EnergyError {
        let deadline = Instant::now() + Duration::from_millis(500);
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break status.to_string(),
                Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(5)),
                Ok(None) => break "it closed its output but is still running".to_string(),
                Err(e) => break format!("its status is unknown: {e}"),
            }
        };
        // Give the stderr thread a moment to collect the last words.
        thread::sleep(Duration::from_millis(20));
        let tail = self
            .stderr_tail
            .lock()
            .map(|t| String::from_utf8_lossy(&t).trim().to_string())
            .unwrap_or_default();
        let stderr = if tail.is_empty() {
            String::new()
        } else {
            format!("; its stderr ends with: {tail}")
        };
        EnergyError::CommandExited {
            program: self.display.clone(),
            status,
            stderr,
        }
    }
}

/// Writes `line` to the program's stdin. A program that has exited leaves a closed pipe, and
/// writing to it raises SIGPIPE, which `replay` (like other Unix tools, see `main.rs`) does not
/// ignore: it would end the whole run without a word. The signal is blocked on this thread for
/// the write, so the write fails with `BrokenPipe` instead, and a SIGPIPE it left pending is
/// taken back before the signal mask is restored.
fn write_line(stdin: &mut ChildStdin, line: &[u8]) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        // SAFETY: plain libc calls on a local, initialised signal set; the mask is this
        // thread's own and is restored before returning.
        unsafe {
            let mut sigpipe: libc::sigset_t = std::mem::zeroed();
            let mut previous: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut sigpipe);
            libc::sigaddset(&mut sigpipe, libc::SIGPIPE);
            let blocked = libc::pthread_sigmask(libc::SIG_BLOCK, &sigpipe, &mut previous) == 0;
            let written = stdin.write_all(line).and_then(|()| stdin.flush());
            if blocked {
                let was_blocked = libc::sigismember(&previous, libc::SIGPIPE) == 1;
                if !was_blocked
                    && matches!(&written, Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe)
                {
                    let no_wait = libc::timespec {
                        tv_sec: 0,
                        tv_nsec: 0,
                    };
                    libc::sigtimedwait(&sigpipe, std::ptr::null_mut(), &no_wait);
                }
                libc::pthread_sigmask(libc::SIG_SETMASK, &previous, std::ptr::null_mut());
            }
            written
        }
    }
    #[cfg(not(unix))]
    {
        stdin.write_all(line).and_then(|()| stdin.flush())
    }
}

impl EnergyProbe for CommandProbe {
    fn name(&self) -> String {
        match &self.declared_name {
            Some(n) => format!("cmd {n} ({})", self.display),
            None => format!("cmd {}", self.display),
        }
    }

    fn resolution(&self) -> ProbeResolution {
        self.resolution
    }

    fn method(&self) -> Method {
        self.method
    }

    fn read_joules(&mut self) -> Result<f64, EnergyError> {
        let reply = self.exchange()?;
        if let Some(previous) = self.last_joules {
            if reply.joules < previous {
                return Err(EnergyError::NotMonotonic {
                    probe: self.name(),
                    from: previous,
                    to: reply.joules,
                });
            }
        }
        self.last_joules = Some(reply.joules);
        Ok(reply.joules)
    }
}

impl Drop for CommandProbe {
    /// `quit`, close stdin, wait up to 1 s, then kill.
    fn drop(&mut self) {
        if let Some(mut stdin) = self.stdin.take() {
            let _ = write_line(&mut stdin, b"quit\n");
        }
        let deadline = Instant::now() + QUIT_GRACE;
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) => return,
                Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(5)),
                _ => break,
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Result<CommandProbe, EnergyError> {
        // The test meters are tiny shell scripts run by /bin/sh as a program with arguments.
        CommandProbe::spawn_with_timeout(
            "/bin/sh",
            &["-c".to_string(), script.to_string()],
            Duration::from_millis(800),
        )
    }

    #[test]
    fn energy_command_reads_and_declares() {
        let script = r#"n=0; while read cmd; do
            [ "$cmd" = quit ] && exit 0
            n=$((n+1)); echo ""; echo "{\"joules\": $n.5, \"timestamp\": $n, \"update_period_s\": 0.002, \"resolution_j\": 0.01, \"name\": \"fake\", \"extra\": 1}"
        done"#;
        let mut p = sh(script).unwrap();
        assert_eq!(p.resolution().update_period_s, 0.002);
        assert_eq!(p.resolution().joules, Some(0.01));
        assert_eq!(p.method(), Method::Counter);
        assert!(p.name().starts_with("cmd fake ("), "{}", p.name());
        assert_eq!(p.read_joules().unwrap(), 2.5);
        assert_eq!(p.read_joules().unwrap(), 3.5);
    }

    #[test]
    fn energy_command_not_found() {
        let e = CommandProbe::spawn("/nonexistent/meter-program", &[])
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("'/nonexistent/meter-program'") && e.contains("program not found"),
            "{e}"
        );
    }

    #[test]
    fn energy_command_exits_early() {
        let e = sh("echo 'meter: no device on /dev/ttyUSB0' >&2; exit 3")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("exited before answering"), "{e}");
        assert!(e.contains("exit status: 3"), "{e}");
        assert!(e.contains("no device on /dev/ttyUSB0"), "{e}");
    }

    #[test]
    fn energy_command_bad_json_quotes_line() {
        let e = sh("read x; echo 'joules=12'; exec sleep 5")
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("bad line") && e.contains("the line was: joules=12"),
            "{e}"
        );
        let e = sh(r#"read x; echo '{"joules": "a", "timestamp": 1}'; exec sleep 5"#)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains(r#"{"joules": "a", "timestamp": 1}"#), "{e}");
        let e = sh(r#"read x; echo '{"joules": 1}'; exec sleep 5"#)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("timestamp"), "{e}");
    }

    #[test]
    fn energy_command_timeout() {
        let start = Instant::now();
        let e = sh("exec sleep 10").err().unwrap().to_string();
        assert!(e.contains("did not answer 'read' within 0.8 s"), "{e}");
        // The probe (and its child) are gone within the timeout plus the quit grace.
        assert!(
            start.elapsed() < Duration::from_secs(4),
            "{:?}",
            start.elapsed()
        );
    }

    #[test]
    fn energy_command_backwards_is_an_error() {
        let script = r#"n=10; while read cmd; do n=$((n-1)); echo "{\"joules\": $n, \"timestamp\": 0}"; done"#;
        let mut p = sh(script).unwrap();
        let e = p.read_joules().unwrap_err().to_string();
        assert!(e.contains("went backwards from 9 J to 8 J"), "{e}");
    }

    #[test]
    fn energy_command_late_answer_is_not_taken_for_the_next_one() {
        // The third answer comes 1.5 s late (after the 0.8 s timeout); later ones at once.
        // Asked again, the program's next line would be that late third answer: the probe
        // must not take it for the fourth.
        let script = r#"n=0; while read cmd; do
            [ "$cmd" = quit ] && exit 0
            n=$((n+1)); [ $n -eq 3 ] && sleep 1.5
            echo "{\"joules\": $n, \"timestamp\": $n}"
        done"#;
        let mut p = sh(script).unwrap();
        assert_eq!(p.read_joules().unwrap(), 2.0);
        let e = p.read_joules().unwrap_err().to_string();
        assert!(e.contains("did not answer 'read' within 0.8 s"), "{e}");
        std::thread::sleep(Duration::from_millis(1000));
        let start = Instant::now();
        let e = p.read_joules().unwrap_err().to_string();
        assert!(
            e.starts_with("energy meter program '/bin/sh -c")
                && e.contains("not read any more after an earlier failure")
                && e.contains("did not answer 'read' within 0.8 s"),
            "{e}"
        );
        assert!(start.elapsed() < Duration::from_millis(100));
    }

    #[test]
    fn energy_command_bad_line_mid_measurement_is_an_error_quoting_it() {
        let script = r#"n=0; while read cmd; do
            [ "$cmd" = quit ] && exit 0
            n=$((n+1))
            if [ $n -eq 3 ]; then echo "ERR sensor busy"; else echo "{\"joules\": $n, \"timestamp\": $n}"; fi
        done"#;
        let mut p = sh(script).unwrap();
        assert_eq!(p.read_joules().unwrap(), 2.0);
        let e = p.read_joules().unwrap_err().to_string();
        assert!(e.contains("the line was: ERR sensor busy"), "{e}");
        // The fourth answer is not the third's: not asked again.
        let e = p.read_joules().unwrap_err().to_string();
        assert!(e.contains("not read any more"), "{e}");
    }
}
