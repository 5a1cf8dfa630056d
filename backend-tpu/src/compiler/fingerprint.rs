//! A program's identity for the persistent cache: its text, the compile options, `XLA_FLAGS` and the
//! plugin build that compiled it (a serialized executable is only valid for the same plugin build).

use crate::pjrt::{Client, CompileOptions};

/// Everything that decides what a compile produces, in one byte string, and a 128-bit hash of it
/// for file names. The full material is stored with each cache entry and compared on load, so a
/// hash collision can never load the wrong executable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fingerprint {
    material: Vec<u8>,
    hash: u128,
}

/// Bumped whenever the cache's file format or key material changes.
const FORMAT: &str = "oxtorch-xla-cache-2";

impl Fingerprint {
    /// The fingerprint of compiling `text` with `options` on `client`'s plugin.
    pub fn of(client: &Client, text: &str, options: &CompileOptions) -> Fingerprint {
        let plugin = client.plugin();
        let mut material = Vec::with_capacity(text.len() + 256);
        let mut field = |bytes: &[u8]| {
            material.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            material.extend_from_slice(bytes);
        };
        field(FORMAT.as_bytes());
        field(plugin.path().to_string_lossy().as_bytes());
        let (major, minor) = plugin.api_version();
        field(format!("pjrt {major}.{minor} xla {:?}", plugin.xla_version()).as_bytes());
        field(client.platform_name().as_bytes());
        field(client.platform_version().as_bytes());
        field(&options.to_proto_bytes());
        // The plugin reads `XLA_FLAGS` (debug options: fusion kinds, vector width, fast math) when it
        // compiles: an executable built under other flags is another program.
        field(std::env::var("XLA_FLAGS").unwrap_or_default().as_bytes());
        field(text.as_bytes());
        let hash = hash128(&material);
        Fingerprint { material, hash }
    }

    /// The key material (compared in full on load).
    pub fn material(&self) -> &[u8] {
        &self.material
    }

    /// The 128-bit hash as 32 hex digits.
    pub fn hex(&self) -> String {
        format!("{:032x}", self.hash)
    }
}

/// Two independent 64-bit FNV-1a style hashes (different offsets and a final mix): stable across
/// runs and platforms, which `std`'s hasher does not promise.
fn hash128(bytes: &[u8]) -> u128 {
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let (mut a, mut b) = (0xcbf2_9ce4_8422_2325u64, 0x6c62_272e_07bb_0142u64);
    for &byte in bytes {
        a = (a ^ u64::from(byte)).wrapping_mul(PRIME);
        b = (b ^ u64::from(byte.rotate_left(3))).wrapping_mul(PRIME).rotate_left(5);
    }
    (u128::from(mix(a)) << 64) | u128::from(mix(b ^ bytes.len() as u64))
}

/// splitmix64's finaliser: spreads every input bit over the output.
fn mix(mut x: u64) -> u64 {
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    use super::hash128;

    #[test]
    fn hash_is_stable_and_sensitive() {
        assert_eq!(hash128(b"abc"), hash128(b"abc"));
        assert_ne!(hash128(b"abc"), hash128(b"abd"));
        assert_ne!(hash128(b""), hash128(b"\0"));
        // A fixed value: the hash names files on disk, so it must never change silently.
        assert_eq!(format!("{:032x}", hash128(b"oxtorch")), "1e43501297fb04190f434df5fb1c7a02");
    }
}
