//! Owned `PJRT_Event`s.

use super::ffi;
use super::plugin::Plugin;
use super::Result;

/// A plugin event; destroyed on drop whether or not it was awaited.
pub struct Event {
    plugin: &'static Plugin,
    raw: *mut ffi::PJRT_Event,
}

// SAFETY: a `PJRT_Event` may be awaited and destroyed from any thread (PJRT's C API objects are
// thread-safe); `Event` owns its handle and is not `Sync`, so one thread uses it at a time.
unsafe impl Send for Event {}

impl Event {
    /// Takes ownership of `raw`; `None` when the plugin returned no event.
    pub(crate) fn from_raw(plugin: &'static Plugin, raw: *mut ffi::PJRT_Event) -> Option<Self> {
        (!raw.is_null()).then_some(Event { plugin, raw })
    }

    /// Blocks until the event fires and returns the error it carries, if any.
    pub fn wait(self, what: &'static str) -> Result<()> {
        let mut args = <ffi::PJRT_Event_Await_Args as ffi::Args>::new();
        args.event = self.raw;
        let api = self.plugin.api();
        // SAFETY: `self.raw` is a live event owned by `self`; it is destroyed by `drop` afterwards.
        unsafe { self.plugin.call(what, api.PJRT_Event_Await, &mut args) }
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        let mut args = <ffi::PJRT_Event_Destroy_Args as ffi::Args>::new();
        args.event = self.raw;
        let api = self.plugin.api();
        // SAFETY: the event is live and owned; nothing uses it after this. A failure to destroy
        // cannot be reported from `drop`; the error object itself is destroyed by `call`.
        let _ = unsafe { self.plugin.call("PJRT_Event_Destroy", api.PJRT_Event_Destroy, &mut args) };
    }
}
