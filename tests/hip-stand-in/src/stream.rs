//! Streams and events: opaque handles over synchronous work. A stream only has to exist; an
//! event records the host time when it is recorded, since the work before it is already done.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use hip_runtime_sys::{HipError, hipEvent_t, hipStream_t};

use crate::errors::{HipResult, guard};
use crate::ffi::{number, pointer, write_out};
use crate::runtime::runtime;

/// The null stream's handle.
const NULL_STREAM: u64 = 0;

/// The live streams and events.
#[derive(Default)]
pub struct Queues {
    streams: HashSet<u64>,
    /// Event handle to the time it was last recorded (`None` until it is).
    events: HashMap<u64, Option<Instant>>,
}

impl Queues {
    /// Checks that `stream` is the null stream or a live one (`hipErrorInvalidHandle` if not).
    pub fn check_stream(&self, stream: u64) -> HipResult {
        if stream == NULL_STREAM || self.streams.contains(&stream) {
            Ok(())
        } else {
            Err(HipError::INVALID_HANDLE)
        }
    }

    /// The time a live event was recorded: `hipErrorInvalidHandle` for an unknown event or one
    /// never recorded.
    fn recorded(&self, event: u64) -> Result<Instant, HipError> {
        self.events
            .get(&event)
            .copied()
            .flatten()
            .ok_or(HipError::INVALID_HANDLE)
    }
}

/// `hipStreamCreate`: a new stream handle.
///
/// # Safety
/// `stream` is null or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipStreamCreate(stream: *mut hipStream_t) -> HipError {
    guard("hipStreamCreate", || {
        let runtime = runtime()?;
        if stream.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        let mut tables = runtime.tables();
        let handle = tables.new_handle();
        tables.queues.streams.insert(handle);
        // SAFETY: non-null, and valid for one write as the caller guarantees.
        unsafe { write_out(stream, pointer(handle)) }
    })
}

/// `hipStreamDestroy`: forgets a stream; the null stream or an unknown handle is
/// `hipErrorInvalidHandle`.
///
/// # Safety
/// None: the handle is only looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipStreamDestroy(stream: hipStream_t) -> HipError {
    guard("hipStreamDestroy", || {
        let removed = runtime()?.tables().queues.streams.remove(&number(stream));
        if removed {
            Ok(())
        } else {
            Err(HipError::INVALID_HANDLE)
        }
    })
}

/// `hipStreamSynchronize`: the stream's work is already done; checks the handle.
///
/// # Safety
/// None: the handle is only looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipStreamSynchronize(stream: hipStream_t) -> HipError {
    guard("hipStreamSynchronize", || {
        runtime()?.tables().queues.check_stream(number(stream))
    })
}

/// `hipEventCreate`: a new event, not yet recorded.
///
/// # Safety
/// `event` is null or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipEventCreate(event: *mut hipEvent_t) -> HipError {
    guard("hipEventCreate", || {
        let runtime = runtime()?;
        if event.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        let mut tables = runtime.tables();
        let handle = tables.new_handle();
        tables.queues.events.insert(handle, None);
        // SAFETY: non-null, and valid for one write as the caller guarantees.
        unsafe { write_out(event, pointer(handle)) }
    })
}

/// `hipEventDestroy`: forgets an event (`hipErrorInvalidHandle` if unknown).
///
/// # Safety
/// None: the handle is only looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipEventDestroy(event: hipEvent_t) -> HipError {
    guard("hipEventDestroy", || {
        match runtime()?.tables().queues.events.remove(&number(event)) {
            Some(_) => Ok(()),
            None => Err(HipError::INVALID_HANDLE),
        }
    })
}

/// `hipEventRecord`: records the current host time in the event, on a null or live stream.
///
/// # Safety
/// None: the handles are only looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipEventRecord(event: hipEvent_t, stream: hipStream_t) -> HipError {
    guard("hipEventRecord", || {
        let runtime = runtime()?;
        let mut tables = runtime.tables();
        tables.queues.check_stream(number(stream))?;
        let slot = tables
            .queues
            .events
            .get_mut(&number(event))
            .ok_or(HipError::INVALID_HANDLE)?;
        *slot = Some(Instant::now());
        Ok(())
    })
}

/// `hipEventSynchronize`: the event's work is already done; checks the handle.
///
/// # Safety
/// None: the handle is only looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipEventSynchronize(event: hipEvent_t) -> HipError {
    guard("hipEventSynchronize", || {
        if runtime()?
            .tables()
            .queues
            .events
            .contains_key(&number(event))
        {
            Ok(())
        } else {
            Err(HipError::INVALID_HANDLE)
        }
    })
}

/// `hipEventElapsedTime`: milliseconds from `start` to `stop` (negative when `stop` was
/// recorded first); `hipErrorInvalidHandle` when either is unknown or was never recorded.
///
/// # Safety
/// `milliseconds` is null or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipEventElapsedTime(
    milliseconds: *mut f32,
    start: hipEvent_t,
    stop: hipEvent_t,
) -> HipError {
    guard("hipEventElapsedTime", || {
        let runtime = runtime()?;
        if milliseconds.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        let tables = runtime.tables();
        let start = tables.queues.recorded(number(start))?;
        let stop = tables.queues.recorded(number(stop))?;
        let elapsed = if stop >= start {
            stop.duration_since(start).as_secs_f64()
        } else {
            -start.duration_since(stop).as_secs_f64()
        };
        // SAFETY: non-null, and valid for one write as the caller guarantees.
        unsafe { write_out(milliseconds, (elapsed * 1000.0) as f32) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::ok;
    use std::time::Duration;

    fn new_stream() -> hipStream_t {
        let mut stream = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        ok(unsafe { hipStreamCreate(&mut stream) });
        assert!(!stream.is_null());
        stream
    }

    fn new_event() -> hipEvent_t {
        let mut event = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        ok(unsafe { hipEventCreate(&mut event) });
        assert!(!event.is_null());
        event
    }

    fn elapsed(start: hipEvent_t, stop: hipEvent_t) -> (HipError, f32) {
        let mut milliseconds = f32::NAN;
        // SAFETY: valid out-pointer; the handles are looked up.
        let status = unsafe { hipEventElapsedTime(&mut milliseconds, start, stop) };
        (status, milliseconds)
    }

    #[test]
    fn streams_are_distinct_handles_destroyed_once() {
        let (a, b) = (new_stream(), new_stream());
        assert_ne!(a, b);
        // SAFETY: handles are only looked up.
        unsafe {
            ok(hipStreamSynchronize(a));
            ok(hipStreamSynchronize(std::ptr::null_mut()));
            ok(hipStreamDestroy(a));
            assert_eq!(hipStreamDestroy(a), HipError::INVALID_HANDLE);
            assert_eq!(hipStreamSynchronize(a), HipError::INVALID_HANDLE);
            assert_eq!(
                hipStreamDestroy(std::ptr::null_mut()),
                HipError::INVALID_HANDLE
            );
            assert_eq!(
                hipStreamSynchronize(pointer(0x5151)),
                HipError::INVALID_HANDLE
            );
            assert_eq!(
                hipStreamCreate(std::ptr::null_mut()),
                HipError::INVALID_VALUE
            );
            ok(hipStreamDestroy(b));
        }
    }

    #[test]
    fn events_time_the_host_between_their_records() {
        let stream = new_stream();
        let (start, stop) = (new_event(), new_event());
        // SAFETY: handles are only looked up.
        unsafe {
            assert_eq!(
                elapsed(start, stop).0,
                HipError::INVALID_HANDLE,
                "not recorded"
            );
            ok(hipEventRecord(start, stream));
            assert_eq!(
                elapsed(start, stop).0,
                HipError::INVALID_HANDLE,
                "stop not recorded"
            );
            std::thread::sleep(Duration::from_millis(30));
            ok(hipEventRecord(stop, std::ptr::null_mut()));
            ok(hipEventSynchronize(stop));
            let (status, forward) = elapsed(start, stop);
            ok(status);
            assert!((30.0..10_000.0).contains(&forward), "{forward} ms");
            let (status, backward) = elapsed(stop, start);
            ok(status);
            assert_eq!(backward, -forward);
            let mut milliseconds = 0.0;
            let status = hipEventElapsedTime(std::ptr::null_mut(), start, stop);
            assert_eq!(status, HipError::INVALID_VALUE);
            assert_eq!(
                hipEventRecord(start, pointer(0x9990)),
                HipError::INVALID_HANDLE
            );
            assert_eq!(
                hipEventRecord(pointer(0x9990), stream),
                HipError::INVALID_HANDLE
            );
            ok(hipEventDestroy(stop));
            assert_eq!(hipEventDestroy(stop), HipError::INVALID_HANDLE);
            assert_eq!(hipEventSynchronize(stop), HipError::INVALID_HANDLE);
            let status = hipEventElapsedTime(&mut milliseconds, start, stop);
            assert_eq!(status, HipError::INVALID_HANDLE);
            assert_eq!(
                hipEventCreate(std::ptr::null_mut()),
                HipError::INVALID_VALUE
            );
            ok(hipEventDestroy(start));
            ok(hipStreamDestroy(stream));
        }
    }

    #[test]
    fn a_stream_handle_is_not_an_event_handle() {
        let stream = new_stream();
        // SAFETY: handles are only looked up.
        unsafe {
            assert_eq!(hipEventDestroy(stream.cast()), HipError::INVALID_HANDLE);
            ok(hipStreamDestroy(stream));
        }
    }
}
