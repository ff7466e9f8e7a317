//! Batched store tasks (`coprocessor.Request.tasks`, TiDB's store batching): one request
//! carries, beside its own region's ranges, tasks for other regions of the same store. TiKV
//! runs each task as a request of its own — the request cloned with the task's region id,
//! epoch, peer and ranges, the cache off — and answers them in `Response.batch_responses`,
//! in task order, each with its `task_id`.
//!
//! A host splits such a request with [`split_tasks`], dispatches every part on its own
//! region's source (each is decided and offloaded, or run locally, on its own), and puts
//! the answers together with [`task_response`] and [`attach_tasks`].
//! [`Offloader::dispatch`](crate::Offloader::dispatch) keeps a request with tasks local
//! ([`LocalReason::BatchedTasks`](crate::LocalReason::BatchedTasks)) rather than send it
//! whole: the forwarded request would drop the tasks.

use rcop_proto::coprocessor::{Request, Response, StoreBatchTaskResponse};

/// One batched task as a request of its own.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct TaskRequest {
    /// The task's id, echoed in its response.
    pub task_id: u64,
    /// The request for the task's region.
    pub request: Request,
}

/// Splits `request` into its own region's request (without tasks) and one request per task,
/// as TiKV builds them: the request cloned, `is_cache_enabled` off, the task's ranges, and
/// the context's region id, epoch and peer replaced by the task's (and its buckets version,
/// when the task sets one).
pub fn split_tasks(request: &Request) -> (Request, Vec<TaskRequest>) {
    let main = Request { tasks: Vec::new(), ..request.clone() };
    let tasks = request
        .tasks
        .iter()
        .map(|task| {
            let mut r =
                Request { is_cache_enabled: false, ranges: task.ranges.clone(), ..main.clone() };
            let ctx = r.context.get_or_insert_with(Default::default);
            ctx.region_id = task.region_id;
            ctx.region_epoch = task.region_epoch;
            ctx.peer = task.peer;
            if task.buckets_version != 0 {
                ctx.buckets_version = task.buckets_version;
            }
            TaskRequest { task_id: task.task_id, request: r }
        })
        .collect();
    (main, tasks)
}

/// A task's answer as TiKV puts it in `batch_responses`: data, region error, lock, other
/// error and execution details of the task's own response, with its id.
pub fn task_response(task_id: u64, response: Response) -> StoreBatchTaskResponse {
    StoreBatchTaskResponse {
        data: response.data,
        region_error: response.region_error,
        locked: response.locked,
        other_error: response.other_error,
        task_id,
        exec_details_v2: response.exec_details_v2,
    }
}

/// Appends the tasks' answers to `main.batch_responses`, in the order given (the request's
/// task order).
pub fn attach_tasks(main: &mut Response, tasks: impl IntoIterator<Item = StoreBatchTaskResponse>) {
    main.batch_responses.extend(tasks);
}

#[cfg(test)]
mod tests {
    use rcop_proto::coprocessor::{KeyRange, StoreBatchTask};
    use rcop_proto::{errorpb, kvrpcpb, metapb};

    use super::*;

    fn range(a: &[u8], b: &[u8]) -> KeyRange {
        KeyRange { start: a.to_vec().into(), end: b.to_vec().into() }
    }

    #[test]
    fn tasks_become_requests_of_their_own_regions() {
        let request = Request {
            context: Some(kvrpcpb::Context {
                region_id: 1,
                keyspace_id: Some(9),
                max_execution_duration_ms: 500,
                ..Default::default()
            }),
            tp: 103,
            data: vec![1, 2, 3].into(),
            start_ts: 77,
            ranges: vec![range(b"a", b"b")],
            is_cache_enabled: true,
            paging_size: 64,
            tasks: vec![
                StoreBatchTask {
                    region_id: 2,
                    region_epoch: Some(metapb::RegionEpoch { conf_ver: 3, version: 4 }),
                    peer: Some(metapb::Peer { id: 5, store_id: 6, ..Default::default() }),
                    ranges: vec![range(b"c", b"d"), range(b"e", b"f")],
                    task_id: 11,
                    buckets_version: 8,
                },
                StoreBatchTask { region_id: 3, task_id: 12, ..Default::default() },
            ],
            ..Default::default()
        };
        let (main, tasks) = split_tasks(&request);
        assert!(main.tasks.is_empty());
        assert_eq!(Request { tasks: request.tasks.clone(), ..main.clone() }, request);
        assert_eq!(tasks.len(), 2);
        let t = &tasks[0].request;
        assert_eq!(tasks[0].task_id, 11);
        assert_eq!(t.ranges, vec![range(b"c", b"d"), range(b"e", b"f")]);
        assert!(!t.is_cache_enabled && t.tasks.is_empty());
        assert_eq!((t.tp, t.start_ts, t.paging_size, &t.data), (103, 77, 64, &request.data));
        let ctx = t.context.as_ref().unwrap();
        assert_eq!(
            (ctx.region_id, ctx.keyspace_id, ctx.max_execution_duration_ms),
            (2, Some(9), 500)
        );
        assert_eq!(ctx.region_epoch, Some(metapb::RegionEpoch { conf_ver: 3, version: 4 }));
        assert_eq!(ctx.peer.as_ref().map(|p| p.store_id), Some(6));
        assert_eq!(ctx.buckets_version, 8);
        let t2 = &tasks[1].request;
        assert!(t2.ranges.is_empty() && t2.context.as_ref().unwrap().region_epoch.is_none());

        let mut answer = Response { data: vec![9].into(), ..Default::default() };
        let failed = Response {
            region_error: Some(errorpb::Error { message: "epoch".into(), ..Default::default() }),
            ..Default::default()
        };
        attach_tasks(
            &mut answer,
            [
                task_response(11, Response { data: vec![1].into(), ..Default::default() }),
                task_response(12, failed),
            ],
        );
        assert_eq!(answer.batch_responses.len(), 2);
        assert_eq!(answer.batch_responses[0].task_id, 11);
        assert_eq!(answer.batch_responses[0].data.as_ref(), [1]);
        assert_eq!(answer.batch_responses[1].region_error.as_ref().unwrap().message, "epoch");
    }
}
