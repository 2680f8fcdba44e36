//! Write coalescing for HTTP/2 connections.
//!
//! A change goes to every watch of it at once, and client-go puts all of a client's
//! watches on one HTTP/2 connection. hyper runs each stream in its own task, and tokio
//! runs the connection's task right after the stream task that woke it, so without help
//! the connection encrypts and writes each stream's frame on its own: a hundred watches
//! cost a hundred TLS records and a hundred `writev`s per change, on both ends.
//! [`Coalesced`] takes the connection's writes into a buffer and, at the first flush,
//! lets the other ready tasks run once before writing: the streams woken by the same
//! change queue their frames meanwhile, and the flush after that writes them together.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Buffered bytes past which a write first drains the buffer (backpressure).
const MAX_BUFFERED: usize = 256 << 10;
/// Turns of the scheduler a flush waits at most.
const MAX_YIELDS: usize = 8;

/// An I/O whose writes are held until a flush, which waits one turn of the scheduler.
pub struct Coalesced<I> {
    io: I,
    /// Bytes taken from the writer and not yet written, from `written` on.
    pending: Vec<u8>,
    written: usize,
    /// How many times the flush under way has yielded, and how much was pending then.
    yields: usize,
    pending_at_yield: usize,
}

impl<I> Coalesced<I> {
    pub fn new(io: I) -> Coalesced<I> {
        Coalesced { io, pending: Vec::new(), written: 0, yields: 0, pending_at_yield: 0 }
    }
}

impl<I: AsyncWrite + Unpin> Coalesced<I> {
    /// Writes everything pending to the inner I/O.
    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.written < self.pending.len() {
            let n = ready!(Pin::new(&mut self.io).poll_write(cx, &self.pending[self.written..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.written += n;
        }
        self.pending.clear();
        self.written = 0;
        Poll::Ready(Ok(()))
    }
}

impl<I: AsyncRead + Unpin> AsyncRead for Coalesced<I> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<I: AsyncWrite + Unpin> AsyncWrite for Coalesced<I> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.poll_write_vectored(cx, &[io::IoSlice::new(buf)])
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if self.pending.len() >= MAX_BUFFERED {
            ready!(self.poll_drain(cx))?;
        }
        let mut n = 0;
        for buf in bufs {
            self.pending.extend_from_slice(buf);
            n += buf.len();
        }
        Poll::Ready(Ok(n))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // Yield while the last yield brought more to write (the streams woken with us are
        // still running), a few times at most.
        let grew = self.yields == 0 || self.pending.len() > self.pending_at_yield;
        if self.written < self.pending.len() && grew && self.yields < MAX_YIELDS {
            // Waking ourselves while running puts this task at the back of the run queue.
            self.yields += 1;
            self.pending_at_yield = self.pending.len();
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        ready!(self.poll_drain(cx))?;
        self.yields = 0;
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_drain(cx))?;
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::{Wake, Waker};

    /// An inner I/O that takes everything and records each write and flush.
    #[derive(Default)]
    struct Recorder {
        writes: Vec<Vec<u8>>,
        flushes: usize,
    }

    impl AsyncWrite for Recorder {
        fn poll_write(mut self: Pin<&mut Self>, _: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
            self.writes.push(buf.to_vec());
            Poll::Ready(Ok(buf.len()))
        }
        fn poll_flush(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            self.flushes += 1;
            Poll::Ready(Ok(()))
        }
        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    /// Counts how often the task was woken.
    #[derive(Default)]
    struct Wakes(AtomicUsize);

    impl Wake for Wakes {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn context() -> (Arc<Wakes>, Waker) {
        let wakes = Arc::new(Wakes::default());
        (Arc::clone(&wakes), Waker::from(Arc::clone(&wakes)))
    }

    fn write(io: &mut Coalesced<Recorder>, cx: &mut Context<'_>, bytes: &[u8]) {
        assert!(matches!(Pin::new(io).poll_write(cx, bytes), Poll::Ready(Ok(n)) if n == bytes.len()));
    }

    fn flush(io: &mut Coalesced<Recorder>, cx: &mut Context<'_>) -> bool {
        match Pin::new(io).poll_flush(cx) {
            Poll::Ready(Ok(())) => true,
            Poll::Pending => false,
            Poll::Ready(Err(e)) => panic!("flush: {e}"),
        }
    }

    #[test]
    fn frames_written_while_a_flush_waits_go_out_in_one_write() {
        let (wakes, waker) = context();
        let mut cx = Context::from_waker(&waker);
        let mut io = Coalesced::new(Recorder::default());
        write(&mut io, &mut cx, b"one ");
        assert!(!flush(&mut io, &mut cx), "the first flush lets the other tasks run");
        assert_eq!(wakes.0.load(Ordering::SeqCst), 1, "and reschedules this one");
        assert!(io.io.writes.is_empty(), "nothing is written yet");
        // Meanwhile another stream's frame arrives: the flush waits one more turn.
        write(&mut io, &mut cx, b"two ");
        assert!(!flush(&mut io, &mut cx));
        // Nothing new this time: everything goes out together.
        assert!(flush(&mut io, &mut cx));
        assert_eq!(io.io.writes, [b"one two ".to_vec()]);
        assert_eq!(io.io.flushes, 1);
        assert_eq!(wakes.0.load(Ordering::SeqCst), 2);
        // The next flush starts over.
        write(&mut io, &mut cx, b"three");
        assert!(!flush(&mut io, &mut cx));
        assert!(flush(&mut io, &mut cx));
        assert_eq!(io.io.writes, [b"one two ".to_vec(), b"three".to_vec()]);
    }

    #[test]
    fn a_flush_waits_a_bounded_number_of_turns() {
        let (_, waker) = context();
        let mut cx = Context::from_waker(&waker);
        let mut io = Coalesced::new(Recorder::default());
        let mut turns = 0;
        loop {
            write(&mut io, &mut cx, b"frame");
            if flush(&mut io, &mut cx) {
                break;
            }
            turns += 1;
            assert!(turns <= MAX_YIELDS, "a steady stream of frames must not hold the flush forever");
        }
        assert_eq!(turns, MAX_YIELDS);
        assert_eq!(io.io.writes.concat(), b"frame".repeat(MAX_YIELDS + 1));
    }

    #[test]
    fn an_empty_flush_does_not_wait_and_a_full_buffer_drains_before_taking_more() {
        let (wakes, waker) = context();
        let mut cx = Context::from_waker(&waker);
        let mut io = Coalesced::new(Recorder::default());
        assert!(flush(&mut io, &mut cx), "nothing pending: flushed at once");
        assert_eq!(wakes.0.load(Ordering::SeqCst), 0);
        let big = vec![7u8; MAX_BUFFERED];
        write(&mut io, &mut cx, &big);
        assert!(io.io.writes.is_empty());
        write(&mut io, &mut cx, b"more");
        assert_eq!(io.io.writes, [big], "the full buffer went out before the next write was taken");
        assert!(matches!(Pin::new(&mut io).poll_shutdown(&mut cx), Poll::Ready(Ok(()))));
        assert_eq!(io.io.writes.last().map(Vec::as_slice), Some(&b"more"[..]), "shutdown writes what is left");
    }
}
