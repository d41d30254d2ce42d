//! A CLI's interactive session under a pseudo-terminal: what a person gets from `handoff continue
//! --exec`. The live check types a prompt into it as a person would and reads the request the
//! CLI sends.
//!
//! The terminal answers the queries a terminal UI asks at start (cursor position, device
//! attributes, colours); without an answer some wait, or give up on the terminal.

use std::fs::File;
use std::io::{Read as _, Write as _};
use std::num::NonZeroU16;
use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd};
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::process::CommandExt as _;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::cli::{clean_command, Invocation};

/// Answers to the queries terminal UIs send, as (query, answer).
const ANSWERS: &[(&[u8], &[u8])] = &[
    // Cursor position report: row 1, column 1.
    (b"\x1b[6n", b"\x1b[1;1R"),
    // Primary device attributes: a VT220 without the kitty keyboard protocol.
    (b"\x1b[c", b"\x1b[?62;22c"),
    // Foreground and background colours.
    (b"\x1b]10;?", b"\x1b]10;rgb:ffff/ffff/ffff\x1b\\"),
    (b"\x1b]11;?", b"\x1b]11;rgb:0000/0000/0000\x1b\\"),
];

/// The size of the pseudo-terminal.
const ROWS: NonZeroU16 = NonZeroU16::new(40).unwrap();
const COLUMNS: NonZeroU16 = NonZeroU16::new(120).unwrap();

/// A program running on a pseudo-terminal.
pub struct PtySession {
    child: Child,
    master: File,
    screen: Arc<Mutex<Screen>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

/// What the program wrote, and when it last wrote.
struct Screen {
    bytes: Vec<u8>,
    last_output: Instant,
}

impl PtySession {
    /// Starts `invocation` (its clean environment, `TERM=xterm-256color`, no `CI`) in a new
    /// session whose controlling terminal is a new pseudo-terminal of 120 × 40.
    pub fn start(invocation: &Invocation) -> std::io::Result<PtySession> {
        let (master, slave) = open_pty(COLUMNS.get(), ROWS.get())?;
        let mut command = clean_command(invocation, &[("TERM", "xterm-256color")])?;
        command
            .stdin(Stdio::from(slave.try_clone()?))
            .stdout(Stdio::from(slave.try_clone()?))
            .stderr(Stdio::from(slave));
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            command.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY as _, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn()?;
        let master = File::from(master);
        let screen = Arc::new(Mutex::new(Screen {
            bytes: Vec::new(),
            last_output: Instant::now(),
        }));
        let reader = {
            let mut input = master.try_clone()?;
            let mut answers = master.try_clone()?;
            let screen = Arc::clone(&screen);
            std::thread::spawn(move || {
                let mut buffer = [0u8; 8192];
                // Ends with EIO when the program and its children closed the terminal.
                while let Ok(n @ 1..) = input.read(&mut buffer) {
                    let chunk = &buffer[..n];
                    for (query, answer) in ANSWERS {
                        if chunk.windows(query.len()).any(|w| w == *query) {
                            let _ = answers.write_all(answer);
                        }
                    }
                    let mut screen = screen.lock().unwrap();
                    screen.bytes.extend_from_slice(chunk);
                    screen.last_output = Instant::now();
                }
            })
        };
        Ok(PtySession {
            child,
            master,
            screen,
            reader: Some(reader),
        })
    }

    /// Waits until the program has written nothing for `quiet`, or `limit` has passed.
    pub fn settle(&self, quiet: Duration, limit: Duration) {
        let started = Instant::now();
        while started.elapsed() < limit {
            if self.screen.lock().unwrap().last_output.elapsed() >= quiet {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Types `text` as keys (a carriage return is Enter).
    pub fn type_keys(&mut self, text: &str) -> std::io::Result<()> {
        // One key at a time, as a person types: some UIs read a paste differently.
        for c in text.chars() {
            let mut utf8 = [0u8; 4];
            self.master.write_all(c.encode_utf8(&mut utf8).as_bytes())?;
            std::thread::sleep(Duration::from_millis(25));
        }
        Ok(())
    }

    /// The program's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends `bytes` in one write: a key whose sequence has several bytes (an arrow is
    /// `ESC [ B`) must arrive whole, or a UI reads a lone Escape.
    pub fn send(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.master.write_all(bytes)
    }

    /// Whether the program is still running.
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Everything the program wrote, as text with the escape sequences left in.
    pub fn screen(&self) -> String {
        String::from_utf8_lossy(&self.screen.lock().unwrap().bytes).into_owned()
    }

    /// The text the terminal shows now: everything the program wrote, drawn on a terminal of
    /// the session's size (a UI that redraws only the cells that change never writes a line
    /// whole).
    pub fn shown(&self) -> String {
        drawn(&self.screen.lock().unwrap().bytes, ROWS, COLUMNS)
    }

    /// Ends the program and everything it started, and returns what it wrote.
    pub fn end(mut self) -> String {
        self.kill();
        // The reader ends when the last holder of the terminal is gone, which a daemon the
        // program started may not be (Codex's `app-server`): wait for it a little, never forever.
        let reader = self.reader.take();
        let started = Instant::now();
        while reader.as_ref().is_some_and(|r| !r.is_finished())
            && started.elapsed() < Duration::from_secs(2)
        {
            std::thread::sleep(Duration::from_millis(20));
        }
        self.screen()
    }
}

impl PtySession {
    /// Kills the program's session (its process group, made by `setsid` in `start`) and reaps it.
    fn kill(&mut self) {
        let group = self.child.id() as libc::pid_t;
        // SAFETY: signals the session's own process group.
        unsafe {
            libc::kill(-group, libc::SIGKILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for PtySession {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The text a terminal of `rows` × `columns` shows once `bytes` are written to it.
pub(crate) fn drawn(bytes: &[u8], rows: NonZeroU16, columns: NonZeroU16) -> String {
    let mut terminal = vt100::Parser::new(rows, columns, 0);
    terminal.process(bytes);
    terminal.screen().contents()
}

/// Kills every process whose program lies under `dir`: what a terminal UI started outside its
/// session (Codex 0.171's TUI leaves an `app-server` daemon, run from the temporary HOME, that
/// outlives the UI). Returns how many it signalled.
pub fn kill_processes_under(dir: &std::path::Path) -> usize {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let mut killed = 0;
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let program = cmdline.split(|b| *b == 0).next().unwrap_or_default();
        if std::path::Path::new(std::ffi::OsStr::from_bytes(program)).starts_with(dir) {
            // SAFETY: signals a process this run's CLI started from its temporary HOME.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
            killed += 1;
        }
    }
    killed
}

/// A new pseudo-terminal of `columns` × `rows`: (master, slave).
fn open_pty(columns: u16, rows: u16) -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut master = -1;
    let mut slave = -1;
    let size = libc::winsize {
        ws_row: rows,
        ws_col: columns,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: openpty writes two descriptors it opened into the pointers given.
    let status = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    if status != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just opened and are owned by nothing else.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    // The master must not leak into the program.
    // SAFETY: sets a flag on a descriptor this function owns.
    unsafe {
        libc::fcntl(master.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC);
    }
    Ok((master, slave))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_on_the_terminal_sees_one_reads_keys_and_gets_its_queries_answered() {
        let home = tempfile::tempdir().unwrap();
        // Asks for the cursor position, reads the answer and a typed line, and echoes both.
        let script = r#"test -t 0 && test -t 1 || { echo "NOT A TERMINAL"; exit 1; }
stty raw -echo
printf '\033[6n'
answer=$(dd bs=1 count=6 2>/dev/null)
stty sane
printf 'ANSWER[%s]\n' "$(printf '%s' "$answer" | tr -d '\033')"
read -r line
printf 'TYPED[%s]\n' "$line"
sleep 30"#;
        let invocation = Invocation {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), script.into()],
            home: home.path().to_owned(),
            env: Vec::new(),
            cwd: home.path().to_owned(),
            close_stdin: false,
            timeout: Duration::from_secs(30),
        };
        let mut session = PtySession::start(&invocation).unwrap();
        session.settle(Duration::from_millis(300), Duration::from_secs(5));
        session.type_keys("hello there\r").unwrap();
        let started = Instant::now();
        while !session.screen().contains("TYPED[") && started.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(session.running(), "the program ended early");
        let screen = session.end();
        assert!(screen.contains("ANSWER[[1;1R]"), "{screen:?}");
        assert!(screen.contains("TYPED[hello there]"), "{screen:?}");
        assert!(!screen.contains("NOT A TERMINAL"), "{screen:?}");
    }
}
