//! The compute pool: dedicated OS threads that run request execution, off the I/O runtime.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
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
    /// Jobs queued or running.
    in_flight: Arc<AtomicUsize>,
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
        Ok(ComputePool { tx: Mutex::new(Some(tx)), threads, in_flight: Arc::default() })
    }

    /// Number of threads.
    pub(crate) fn threads(&self) -> usize {
        self.threads
    }

    /// Threads with no job to run now (neither running one nor one queued for them): how
    /// many parts a request may split into without taking a thread from another request.
    pub(crate) fn idle_threads(&self) -> usize {
        self.threads.saturating_sub(self.in_flight.load(Ordering::Relaxed))
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
        self.submit(f)?.wait().await
    }

    /// Queues `f` now and returns a handle to await its result: several jobs submitted one
    /// after the other run at once on idle threads.
    ///
    /// # Errors
    ///
    /// [`Error::PoolClosed`] after [`ComputePool::close`].
    pub(crate) fn submit<T, F>(&self, f: F) -> Result<Submitted<T>>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        let (done, result) = oneshot::channel();
        let in_flight = Arc::clone(&self.in_flight);
        let job: Job = Box::new(move || {
            // A panic fails this job only; the thread lives on. The receiver may be gone (the
            // client disconnected); the result is dropped then.
            let r = panic::catch_unwind(AssertUnwindSafe(f));
            in_flight.fetch_sub(1, Ordering::Relaxed);
            let _ = done.send(r);
        });
        let tx = self.tx.lock().map_err(|_| Error::PoolClosed)?;
        let tx = tx.as_ref().ok_or(Error::PoolClosed)?;
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        if tx.send(job).is_err() {
            self.in_flight.fetch_sub(1, Ordering::Relaxed);
            return Err(Error::PoolClosed);
        }
        Ok(Submitted { result })
    }

    /// Closes the queue: queued jobs still run, new ones fail, the threads then exit.
    pub(crate) fn close(&self) {
        if let Ok(mut tx) = self.tx.lock() {
            tx.take();
        }
    }
}

/// A job queued by [`ComputePool::submit`].
#[derive(Debug)]
pub(crate) struct Submitted<T> {
    result: oneshot::Receiver<thread::Result<T>>,
}

impl<T> Submitted<T> {
    /// The job's result.
    ///
    /// # Errors
    ///
    /// [`Error::PoolClosed`] when the job was dropped unrun; [`Error::ExecutionPanicked`]
    /// if it panicked.
    pub(crate) async fn wait(self) -> Result<T> {
        self.result.await.map_err(|_| Error::PoolClosed)?.map_err(|_| Error::ExecutionPanicked)
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
        assert_eq!(pool.idle_threads(), 2);
        let name = pool.run(|| thread::current().name().map(str::to_owned)).await.unwrap();
        assert!(name.unwrap().starts_with("rcop-compute-"));
        let sums = futures::future::join_all((0..8u64).map(|i| pool.run(move || i * 2))).await;
        assert_eq!(
            sums.into_iter().map(Result::unwrap).collect::<Vec<_>>(),
            [0, 2, 4, 6, 8, 10, 12, 14]
        );
        assert_eq!(pool.idle_threads(), 2, "every job done");
        // A running job takes a thread.
        let (release, wait) = std::sync::mpsc::channel::<()>();
        let (started_tx, started) = std::sync::mpsc::channel::<()>();
        let running = pool.run(move || {
            let _ = started_tx.send(());
            wait.recv().is_ok()
        });
        let check = async {
            tokio::task::spawn_blocking(move || started.recv()).await.unwrap().unwrap();
            let idle = pool.idle_threads();
            release.send(()).unwrap();
            idle
        };
        let (ran, idle) = tokio::join!(running, check);
        assert!(ran.unwrap());
        assert_eq!(idle, 1);
        assert_eq!(pool.idle_threads(), 2);
        pool.close();
        assert!(matches!(pool.run(|| 1).await, Err(Error::PoolClosed)));
        assert_eq!(pool.idle_threads(), 2);
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
