//! The compute pool: dedicated OS threads that run request execution, off the I/O runtime.

use std::panic::{self, AssertUnwindSafe};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;

use tokio::sync::oneshot;

use crate::error::{Error, Result};

type Job = Box<dyn FnOnce() + Send + 'static>;

/// Stack of a compute thread: room for protobuf's 100 levels of nested messages and the
/// engine's expression depth bound, decoded and built recursively, in a debug build too.
const COMPUTE_STACK_SIZE: usize = 16 << 20;

/// A fixed set of threads fed from one queue.
///
/// [`ComputePool::run`] sends a closure and awaits its result without blocking the async
/// runtime. Dropping the pool closes the queue; the threads finish the jobs already queued
/// and exit.
#[derive(Debug)]
pub(crate) struct ComputePool {
    tx: Mutex<Option<mpsc::Sender<Job>>>,
    threads: usize,
}

impl ComputePool {
    /// Starts `threads` threads named `rcop-compute-N`.
    pub(crate) fn new(threads: usize) -> Result<Self> {
        let (tx, rx) = mpsc::channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        let threads = threads.max(1);
        for i in 0..threads {
            let rx = Arc::clone(&rx);
            thread::Builder::new()
                .name(format!("rcop-compute-{i}"))
                .stack_size(COMPUTE_STACK_SIZE)
                .spawn(move || {
                    loop {
                        // The lock is held only while taking one job off the queue.
                        let job = match rx.lock() {
                            Ok(rx) => rx.recv(),
                            Err(_) => return,
                        };
                        match job {
                            Ok(job) => job(),
                            Err(mpsc::RecvError) => return,
                        }
                    }
                })?;
        }
        Ok(ComputePool { tx: Mutex::new(Some(tx)), threads })
    }

    /// Number of threads.
    pub(crate) fn threads(&self) -> usize {
        self.threads
    }

    /// Runs `f` on a pool thread and returns its result.
    ///
    /// # Errors
    ///
    /// [`Error::PoolClosed`] after [`ComputePool::close`]; [`Error::ExecutionPanicked`] if
    /// `f` panicked.
    pub(crate) async fn run<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        let (done, result) = oneshot::channel();
        let job: Job = Box::new(move || {
            // A panic fails this job only; the thread lives on. The receiver may be gone (the
            // client disconnected); the result is dropped then.
            let _ = done.send(panic::catch_unwind(AssertUnwindSafe(f)));
        });
        {
            let tx = self.tx.lock().map_err(|_| Error::PoolClosed)?;
            tx.as_ref().ok_or(Error::PoolClosed)?.send(job).map_err(|_| Error::PoolClosed)?;
        }
        result.await.map_err(|_| Error::PoolClosed)?.map_err(|_| Error::ExecutionPanicked)
    }

    /// Closes the queue: queued jobs still run, new ones fail, the threads then exit.
    pub(crate) fn close(&self) {
        if let Ok(mut tx) = self.tx.lock() {
            tx.take();
        }
    }
}

impl Drop for ComputePool {
    fn drop(&mut self) {
        self.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn runs_jobs_off_the_runtime_thread() {
        let pool = ComputePool::new(2).unwrap();
        assert_eq!(pool.threads(), 2);
        let name = pool.run(|| thread::current().name().map(str::to_owned)).await.unwrap();
        assert!(name.unwrap().starts_with("rcop-compute-"));
        let sums = futures::future::join_all((0..8u64).map(|i| pool.run(move || i * 2))).await;
        assert_eq!(
            sums.into_iter().map(Result::unwrap).collect::<Vec<_>>(),
            [0, 2, 4, 6, 8, 10, 12, 14]
        );
        pool.close();
        assert!(matches!(pool.run(|| 1).await, Err(Error::PoolClosed)));
    }

    #[tokio::test]
    async fn a_panicking_job_fails_only_itself() {
        let pool = ComputePool::new(1).unwrap();
        let r = pool.run(|| -> u32 { panic!("boom") }).await;
        assert!(matches!(r, Err(Error::ExecutionPanicked)));
        // The only thread survived.
        assert_eq!(pool.run(|| 7).await.unwrap(), 7);
    }
}
