//! Compiling and running StableHLO programs from `shared/notes/stablehlo-verified.md` on the CPU
//! plugin, and the errors around it.

mod common;

use common::{f32_buffer, f32_values};
use oxtorch_backend_tpu::pjrt::{
    Buffer, Client, ClientOptions, CompileOptions, ElementType, Error, ErrorCode, Executable, TensorType,
};

const ADD: &str = r#"module @add {
  func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %0 = "stablehlo.add"(%a, %b) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    "func.return"(%0) : (tensor<2x3xf32>) -> ()
  }
}"#;

const BMM: &str = r#"module @bmm {
  func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
    %0 = "stablehlo.dot_general"(%a, %b) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
    "func.return"(%0) : (tensor<2x3x5xf32>) -> ()
  }
}"#;

const REDUCE: &str = r#"module @reduce {
  func.func @main(%x: tensor<2x4xf32>) -> (tensor<2xf32>, tensor<4xf32>) {
    %zero = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %ninf = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
    %sum = "stablehlo.reduce"(%x, %zero) ({
    ^bb0(%acc: tensor<f32>, %e: tensor<f32>):
      %s = "stablehlo.add"(%acc, %e) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%s) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<2x4xf32>, tensor<f32>) -> tensor<2xf32>
    %max = "stablehlo.reduce"(%x, %ninf) ({
    ^bb0(%acc: tensor<f32>, %e: tensor<f32>):
      %m = "stablehlo.maximum"(%acc, %e) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%m) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 0>} : (tensor<2x4xf32>, tensor<f32>) -> tensor<4xf32>
    "func.return"(%sum, %max) : (tensor<2xf32>, tensor<4xf32>) -> ()
  }
}"#;

/// Probe P1 of the notes: `dense<...>` where `array<i64: ...>` is required.
const BAD_ATTRIBUTE: &str = r#"module @p1 {
  func.func @main(%v: tensor<3xf32>) -> tensor<2x3xf32> {
    %0 = "stablehlo.broadcast_in_dim"(%v) {broadcast_dimensions = dense<1> : tensor<1xi64>} : (tensor<3xf32>) -> tensor<2x3xf32>
    "func.return"(%0) : (tensor<2x3xf32>) -> ()
  }
}"#;

fn compile(client: &Client, text: &str) -> Executable {
    Executable::compile(client, text, &CompileOptions::default()).unwrap()
}

#[test]
fn elementwise_add() {
    let Some(client) = common::client() else { return };
    let exe = compile(&client, ADD);
    assert_eq!(exe.num_outputs(), 1);
    assert_eq!(exe.output_types(), [TensorType::new(ElementType::F32, &[2, 3])]);
    let a = f32_buffer(&client, &[1.5, 2.0, 3.0, 0.25, -1.0, 1e30], &[2, 3]);
    let b = f32_buffer(&client, &[2.0, -0.5, 4.0, 3.0, 1.0, 1e30], &[2, 3]);
    let out = exe.execute(&[&a, &b]).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].dims(), [2, 3]);
    assert_eq!(f32_values(&out[0]), [3.5, 1.5, 7.0, 3.25, 0.0, 2e30]);
    // The same executable runs again on other inputs.
    let first = f32_values(&out[0]);
    let out = exe.execute(&[&out[0], &a]).unwrap();
    let expected: Vec<f32> = first.iter().zip(f32_values(&a)).map(|(x, y)| x + y).collect();
    assert_eq!(f32_values(&out[0]), expected);
    assert_eq!(expected[..5], [5.0, 3.5, 10.0, 3.5, -1.0]);
}

#[test]
fn batched_dot_general() {
    let Some(client) = common::client() else { return };
    let exe = compile(&client, BMM);
    #[rustfmt::skip]
    let a = [2., 1., 0., -2., -1., -3., -3., -3., -2., 2., 1., 3.,
             0., 1., 3., 2., 1., 0., 0., 3., -2., 2., 1., -3.];
    #[rustfmt::skip]
    let b = [-1., 3., 0., -3., 2., 2., 2., -2., -3., 3., -3., 0., -3., -1., 0., -1., -1., -3., -3., -3.,
             -3., 1., 0., 1., -2., 1., 2., -1., 0., 3., 2., 3., -1., 1., 3., 1., 2., 1., 1., -1.];
    #[rustfmt::skip]
    let expected = [2., 10., 4., -3., 13., 7., -6., 24., 24., -2., 0., -5., -16., -10., -7.,
                    9., 15., -2., 5., 10., 0., 7., 3., 4., -5., 7., -1., -6., -4., 16.];
    let out =
        exe.execute(&[&f32_buffer(&client, &a, &[2, 3, 4]), &f32_buffer(&client, &b, &[2, 4, 5])]).unwrap();
    assert_eq!(out[0].dims(), [2, 3, 5]);
    assert_eq!(f32_values(&out[0]), expected);
}

#[test]
fn reduce_with_regions_and_two_outputs() {
    let Some(client) = common::client() else { return };
    let exe = compile(&client, REDUCE);
    assert_eq!(exe.num_outputs(), 2);
    let x = f32_buffer(&client, &[-1., 2., -3., 4., -5., -6., 7., -8.], &[2, 4]);
    let out = exe.execute(&[&x]).unwrap();
    assert_eq!(f32_values(&out[0]), [2., -12.]);
    assert_eq!(f32_values(&out[1]), [-1., 2., 7., 4.]);
}

#[test]
fn a_parse_error_is_an_error_with_the_diagnostic() {
    let Some(client) = common::client() else { return };
    let err = Executable::compile(&client, BAD_ATTRIBUTE, &CompileOptions::default()).unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::UNKNOWN), "{err}");
    let text = err.to_string();
    assert!(text.starts_with("PJRT_Client_Compile failed [2 UNKNOWN]"), "{text}");
    assert!(text.contains("-:3:10: error:") && text.contains("broadcast_dimensions"), "{text}");
    let err = Executable::compile(&client, "this is not MLIR", &CompileOptions::default()).unwrap_err();
    assert!(matches!(err, Error::Plugin { .. }), "{err}");
}

#[test]
fn wrong_arguments_are_refused_before_the_call() {
    let Some(client) = common::client() else { return };
    let exe = compile(&client, ADD);
    let good = f32_buffer(&client, &[0.0; 6], &[2, 3]);
    // Same byte size, other shape: the plugin would run it silently.
    let transposed = f32_buffer(&client, &[0.0; 6], &[3, 2]);
    let err = exe.execute(&[&good, &transposed]).unwrap_err().to_string();
    assert_eq!(err, "argument 1: expected tensor<2x3xf32>, got tensor<3x2xf32>");
    // Same byte size, other dtype.
    let ints =
        Buffer::from_host(&client, client.device(0).unwrap(), &[0u8; 24], ElementType::S32, &[2, 3]).unwrap();
    let err = exe.execute(&[&ints, &good]).unwrap_err().to_string();
    assert_eq!(err, "argument 0: expected tensor<2x3xf32>, got tensor<2x3xi32>");
    let err = exe.execute(&[&good]).unwrap_err().to_string();
    assert_eq!(err, "the program takes 2 argument(s) but 1 were given");
    // Another device of the same client.
    let on_1 =
        Buffer::from_host(&client, client.device(1).unwrap(), &[0u8; 24], ElementType::F32, &[2, 3]).unwrap();
    let err = exe.execute(&[&good, &on_1]).unwrap_err().to_string();
    assert!(err.contains("argument 1 is on another device"), "{err}");
    // Another client.
    let other = Client::new(client.plugin(), &ClientOptions::new().cpu_device_count(1)).unwrap();
    let foreign = f32_buffer(&other, &[0.0; 6], &[2, 3]);
    let err = exe.execute(&[&good, &foreign]).unwrap_err().to_string();
    assert!(err.contains("argument 1 belongs to another client"), "{err}");
}

#[test]
fn execute_async_returns_usable_outputs() {
    let Some(client) = common::client() else { return };
    let exe = compile(&client, ADD);
    let a = f32_buffer(&client, &[1.0; 6], &[2, 3]);
    let (out, done) = exe.execute_async(&[&a, &a]).unwrap();
    // Reading an output waits for it, whether or not the event was awaited.
    assert_eq!(f32_values(&out[0]), [2.0; 6]);
    if let Some(done) = done {
        done.wait("execute").unwrap();
    }
}
