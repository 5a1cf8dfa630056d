//! Device copies of the 0-d host values a fused program takes as arguments (scalars such as an
//! epsilon or a softmax scale, view offsets, a row count), kept and reused.
//!
//! A decode step of a 12-layer model passes about 140 of them, and most repeat every step: an
//! upload each per launch (a plugin call, an allocation and a copy) cost a millisecond of host time
//! per step. Arguments that are not donated are only read, so launches share one buffer per value.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use oxtorch_core::{DType, Device, Result};

use super::transfer;
use crate::pjrt::{Buffer, Client, Device as PjrtDevice};

/// At most this many values are kept; past it the cache starts over (an offset that moves every
/// step, such as a decode position, would otherwise grow it without bound).
const CAPACITY: usize = 4096;

/// Values of at most this many bytes are cached (every scalar dtype fits).
const MAX_BYTES: usize = 16;

/// A value's identity: its device, its dtype and its bytes.
type Key = (Device, DType, [u8; MAX_BYTES], u8);

static CACHE: Mutex<Option<HashMap<Key, Arc<Buffer>>>> = Mutex::new(None);

/// The 0-d `dtype` value `bytes` on `device`: a buffer uploaded earlier for the same value, or a
/// new upload. Callers must never donate it (a program only reads it).
pub(crate) fn upload(
    client: &Client,
    pjrt_device: &PjrtDevice,
    device: Device,
    bytes: &[u8],
    dtype: DType,
) -> Result<Arc<Buffer>> {
    if bytes.len() > MAX_BYTES {
        return Ok(Arc::new(transfer::upload(client, pjrt_device, bytes, dtype, &[])?));
    }
    let mut padded = [0u8; MAX_BYTES];
    padded[..bytes.len()].copy_from_slice(bytes);
    let key = (device, dtype, padded, bytes.len() as u8);
    let lock = || CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(known) = lock().as_ref().and_then(|m| m.get(&key)) {
        return Ok(known.clone());
    }
    let buffer = Arc::new(transfer::upload(client, pjrt_device, bytes, dtype, &[])?);
    let mut cache = lock();
    let map = cache.get_or_insert_with(HashMap::new);
    if map.len() >= CAPACITY {
        map.clear();
    }
    map.insert(key, buffer.clone());
    Ok(buffer)
}
