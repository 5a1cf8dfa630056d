//! Host to device and back, for every element type, and the checks made before the call.

mod common;

use oxtorch_backend_tpu::pjrt::{Buffer, Client, ClientOptions, ElementType};

/// Deterministic bytes for `n` elements of `ty` (0/1 for bool).
fn sample_bytes(ty: ElementType, n: usize) -> Vec<u8> {
    let len = n * ty.size_in_bytes();
    (0..len)
        .map(|i| if ty == ElementType::Pred { (i * 7 % 3 == 0) as u8 } else { (i * 37 + 11) as u8 })
        .collect()
}

#[test]
fn every_element_type_round_trips_bit_exactly() {
    let Some(client) = common::client() else { return };
    for ty in ElementType::ALL {
        for dims in [&[2i64, 3][..], &[][..], &[4, 0, 2][..], &[1, 1, 5][..]] {
            let n: i64 = dims.iter().product();
            let bytes = sample_bytes(ty, n as usize);
            let device = client.device(1).unwrap();
            let buffer = Buffer::from_host(&client, device, &bytes, ty, dims).unwrap();
            assert_eq!(buffer.element_type(), ty);
            assert_eq!(buffer.dims(), dims);
            assert_eq!(buffer.to_host().unwrap(), bytes, "{ty} {dims:?}");
        }
    }
}

#[test]
fn wrong_byte_counts_are_refused_before_the_call() {
    let Some(client) = common::client() else { return };
    let device = client.device(0).unwrap();
    let err =
        Buffer::from_host(&client, device, &[0u8; 20], ElementType::F32, &[2, 3]).unwrap_err().to_string();
    assert!(err.contains("20 bytes") && err.contains("24 bytes"), "{err}");
    let err = Buffer::from_host(&client, device, &[0u8; 4], ElementType::F32, &[-1]).unwrap_err().to_string();
    assert!(err.contains("negative dimension -1"), "{err}");
    let err =
        Buffer::from_host(&client, device, &[], ElementType::F32, &[i64::MAX, 4]).unwrap_err().to_string();
    assert!(err.contains("too large"), "{err}");
    let err = Buffer::from_host(&client, device, &[0, 2], ElementType::Pred, &[2]).unwrap_err().to_string();
    assert!(err.contains("only 0 and 1"), "{err}");
}

#[test]
fn a_device_of_another_client_is_refused() {
    let Some(client) = common::client() else { return };
    let other = Client::new(client.plugin(), &ClientOptions::new().cpu_device_count(1)).unwrap();
    let err = Buffer::from_host(&client, other.device(0).unwrap(), &[0u8; 4], ElementType::F32, &[1])
        .unwrap_err()
        .to_string();
    assert!(err.contains("does not belong to this client"), "{err}");
}

#[test]
fn buffers_keep_their_client_alive() {
    let Some(client) = common::client() else { return };
    let buffer = common::f32_buffer(&client, &[1.0, 2.0], &[2]);
    drop(client);
    assert_eq!(common::f32_values(&buffer), [1.0, 2.0]);
}
