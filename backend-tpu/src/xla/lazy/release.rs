//! Releasing a launched program's inputs once it has run. Destroying a buffer that was donated to
//! a program still running blocks until the program finishes (the plugin waits for the donation
//! to complete), so a sync that dropped its graph's inputs itself would wait for the whole program:
//! recording the next step (a training loop, a decode loop) could not overlap with running this
//! one. The inputs go to a thread that awaits the program's completion event and then drops them.

use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex, OnceLock};

use crate::pjrt::{Buffer, Event};

/// A program's completion event and the buffers to drop once it fires.
type Pending = (Event, Vec<Arc<Buffer>>);

/// The releasing thread's queue; `None` when the thread could not be started.
static QUEUE: OnceLock<Option<Mutex<Sender<Pending>>>> = OnceLock::new();

fn queue() -> Option<&'static Mutex<Sender<Pending>>> {
    QUEUE
        .get_or_init(|| {
            let (send, receive) = channel::<Pending>();
            std::thread::Builder::new()
                .name("oxtorch-xla-release".into())
                .spawn(move || {
                    for (done, buffers) in receive {
                        // A failed program reports its error when its outputs are read.
                        let _ = done.wait("PJRT_Event_Await (releasing a program's inputs)");
                        drop(buffers);
                    }
                })
                .ok()
                .map(|_| Mutex::new(send))
        })
        .as_ref()
}

/// Drops `buffers` once `done` (a launched program's completion event) fires, without waiting
/// here; at once when there is no event (the program has run, or the plugin gives none).
pub(super) fn after(done: Option<Event>, buffers: Vec<Arc<Buffer>>) {
    let (Some(done), Some(queue)) = (done, queue()) else { return };
    // A send fails only when the thread is gone; the buffers are then dropped here.
    let _ = queue.lock().unwrap_or_else(|e| e.into_inner()).send((done, buffers));
}
