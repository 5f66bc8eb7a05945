//! [`Output`]: the bytes an encoder writes, held, or sent on to a sink every megabyte.
//!
//! An encoder that records spans needs each byte's position in the whole output as it writes
//! it, not in what it still holds. `Output` counts what it has sent on, so
//! [`Output::len`] is that position either way, and an encoder writes the same bytes and
//! spans whether its output is held whole or goes to a temporary file as it is made (the app's
//! large columns: [`crate::mapped::Spill`]).

use std::io::Write;

/// How much an [`Output`] with a sink holds before [`Output::send_when_full`] sends it on: a
/// megabyte, so a walk's output costs little more than that in memory (each of the app's large
/// columns is being written at once), in writes large enough that their number does not matter.
pub(crate) const SEND_EVERY: usize = 1 << 20;

/// Bytes written so far: held in `held`, or partly sent on to a sink. See the module docs.
pub(crate) struct Output<'a> {
    /// What is not sent on yet (all of it without a sink).
    pub held: Vec<u8>,
    /// Bytes sent to the sink so far.
    sent: usize,
    sink: Option<&'a mut (dyn Write + 'static)>,
    /// Whether writing to the sink failed: what it holds then is not the output.
    failed: bool,
}

impl<'a> Output<'a> {
    /// An output held in `held` (which may already hold room).
    pub fn held(held: Vec<u8>) -> Output<'a> {
        Output {
            held,
            sent: 0,
            sink: None,
            failed: false,
        }
    }

    /// An output sent to `sink` (when there is one) once `flush` is asked to. With a sink, it
    /// holds room for a little more than [`SEND_EVERY`] bytes, and `held` is only where to
    /// start.
    pub fn to(sink: Option<&'a mut (dyn Write + 'static)>, mut held: Vec<u8>) -> Output<'a> {
        if sink.is_some() {
            held.reserve(SEND_EVERY + (SEND_EVERY >> 2));
        }
        Output {
            sink,
            ..Output::held(held)
        }
    }

    /// How many bytes were written: sent on, and held. The position of the next byte.
    #[inline]
    pub fn len(&self) -> usize {
        self.sent + self.held.len()
    }

    /// Appends `bytes`.
    #[inline]
    pub fn extend_from_slice(&mut self, bytes: &[u8]) {
        self.held.extend_from_slice(bytes);
    }

    /// Whether there is a sink.
    pub fn has_sink(&self) -> bool {
        self.sink.is_some()
    }

    /// Whether a write to the sink failed.
    pub fn failed(&self) -> bool {
        self.failed
    }

    /// Sends what is held to the sink, if there is one and at least `least` bytes are held.
    pub fn flush(&mut self, least: usize) {
        let Some(sink) = self.sink.as_mut() else {
            return;
        };
        if self.held.len() < least || self.failed {
            return;
        }
        if sink.write_all(&self.held).is_err() {
            self.failed = true;
        }
        self.sent += self.held.len();
        self.held.clear();
    }

    /// Sends what is held to the sink once it is [`SEND_EVERY`] bytes or more.
    #[inline]
    pub fn send_when_full(&mut self) {
        if self.held.len() >= SEND_EVERY {
            self.flush(SEND_EVERY);
        }
    }

    /// Everything held, once the rest is sent: all of the output without a sink, the bytes
    /// not sent yet with one (none after `flush(0)`).
    pub fn into_held(self) -> Vec<u8> {
        self.held
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_what_was_sent_on() {
        let mut sink = Vec::new();
        let mut out = Output::to(Some(&mut sink), Vec::new());
        out.extend_from_slice(&[1, 2, 3]);
        out.flush(4);
        assert_eq!(
            (out.len(), out.held.len()),
            (3, 3),
            "fewer than asked: held"
        );
        out.flush(3);
        out.extend_from_slice(&[4]);
        assert_eq!((out.len(), out.held.len()), (4, 1));
        out.send_when_full();
        assert_eq!(out.held, [4], "far below SEND_EVERY: held");
        out.extend_from_slice(&vec![5; SEND_EVERY]);
        out.send_when_full();
        assert!(out.held.is_empty() && !out.failed());
        assert_eq!(out.len(), 4 + SEND_EVERY);
        drop(out);
        assert_eq!(sink.len(), 4 + SEND_EVERY);
        assert_eq!(sink[..4], [1, 2, 3, 4]);

        // Without a sink, everything is held.
        let mut held = Output::held(Vec::new());
        held.extend_from_slice(&vec![7; SEND_EVERY + 1]);
        held.send_when_full();
        assert_eq!(held.into_held().len(), SEND_EVERY + 1);

        // A sink that fails says so, and takes nothing more.
        struct Full;
        impl Write for Full {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::ErrorKind::StorageFull.into())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let mut full = Full;
        let mut out = Output::to(Some(&mut full), Vec::new());
        out.extend_from_slice(&[1]);
        out.flush(0);
        assert!(out.failed());
    }
}
