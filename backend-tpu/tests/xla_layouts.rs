//! The runtime's view handling against the CPU backend on random layouts: reading any strided view
//! (permuted, stepped, broadcast, overlapping, offset) of a flat device buffer, and writing and
//! filling through any non-overlapping view, give exactly the CPU backend's elements.

mod common;

use oxtorch_backend_cpu::CpuStorage;
use oxtorch_backend_tpu::xla::XlaStorage;
use oxtorch_core::ops::Prim;
use oxtorch_core::{BackendStorage, Device, Layout, Scalar};

/// A small deterministic generator (xorshift), so the cases are the same on every run.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// A random layout over a buffer of `len` elements: 0–3 dims, strides from 0 to 7, an offset.
fn layout(rng: &mut Rng, len: usize) -> Layout {
    loop {
        let rank = rng.below(4);
        let dims: Vec<usize> = (0..rank).map(|_| 1 + rng.below(4)).collect();
        let strides: Vec<usize> = (0..rank).map(|_| rng.below(8)).collect();
        let offset = rng.below(len);
        let l = Layout::new(dims, strides, offset).unwrap();
        if l.storage_extent() <= len {
            return l;
        }
    }
}

fn host(len: usize) -> CpuStorage {
    CpuStorage::from_vec((0..len).map(|i| i as f32 * 0.5 - 3.0).collect::<Vec<f32>>())
}

#[test]
fn random_views_read_and_write_like_the_cpu_backend() {
    if common::plugin().is_none() {
        return;
    }
    let device = Device::Xla(0);
    let len = 40;
    let base = host(len);
    let on = XlaStorage::from_cpu(&base, device).unwrap();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut reads, mut writes) = (0, 0);
    for case in 0..120 {
        let view = layout(&mut rng, len);
        let expected = CpuStorage::execute(&Prim::Copy, &[(&base, &view)]).unwrap().remove(0);
        let got = XlaStorage::execute(&Prim::Copy, &[(&on, &view)]).unwrap().remove(0).to_cpu().unwrap();
        assert_eq!(got, expected, "case {case}: reading {view:?}");
        reads += 1;

        if view.may_overlap() {
            continue;
        }
        // Write a source of the view's shape (itself a random strided view) through the view.
        let src_base = CpuStorage::from_vec((0..len).map(|i| 100.0 + i as f32).collect::<Vec<f32>>());
        let src_on = XlaStorage::from_cpu(&src_base, device).unwrap();
        let src_view = loop {
            let l = layout(&mut rng, len);
            if let Ok(v) =
                Layout::new(view.dims().to_vec(), l.strides().iter().map(|&s| s.min(2)).collect(), 0)
            {
                if v.storage_extent() <= len {
                    break v;
                }
            }
        };
        let mut expected = base.clone();
        expected.copy_from(&view, &src_base, &src_view).unwrap();
        let mut dst = XlaStorage::from_cpu(&base, device).unwrap();
        dst.copy_from(&view, &src_on, &src_view).unwrap();
        assert_eq!(
            dst.to_cpu().unwrap(),
            expected,
            "case {case}: writing through {view:?} from {src_view:?}"
        );

        let mut expected = base.clone();
        expected.fill(&view, Scalar::Float(-7.25)).unwrap();
        let mut dst = XlaStorage::from_cpu(&base, device).unwrap();
        dst.fill(&view, Scalar::Float(-7.25)).unwrap();
        assert_eq!(dst.to_cpu().unwrap(), expected, "case {case}: filling {view:?}");
        writes += 1;
    }
    assert!(reads == 120 && writes > 30, "too few write cases: {writes}");
}

/// Views of parts of a tensor (boxes of its shape, dims in any order), and views of the same sizes
/// and strides cut across the tensor's rows: read, written and filled like the CPU backend, at
/// every offset they can take. A box is read and written as a `dynamic_slice` or
/// `dynamic_update_slice` of the reshaped buffer; a view that runs past the end of a row at one
/// offset and not at another must not take the box's program at both.
#[test]
fn boxes_of_a_tensor_and_views_across_its_rows_read_and_write_like_the_cpu_backend() {
    if common::plugin().is_none() {
        return;
    }
    let device = Device::Xla(0);
    let len = 60;
    let base = host(len);
    let on = XlaStorage::from_cpu(&base, device).unwrap();
    let src_base = CpuStorage::from_vec((0..len).map(|i| 100.0 + i as f32).collect::<Vec<f32>>());
    let src_on = XlaStorage::from_cpu(&src_base, device).unwrap();
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let parents: [&[usize]; 4] = [&[3, 4, 5], &[5, 12], &[2, 3, 10], &[4, 15]];
    let mut cases = 0;
    for case in 0..60 {
        let parent = parents[case % parents.len()];
        let mut strides = vec![1usize; parent.len()];
        for d in (0..parent.len() - 1).rev() {
            strides[d] = strides[d + 1] * parent[d + 1];
        }
        // Sizes up to the parent's; a random dim order.
        let mut dims: Vec<(usize, usize)> =
            parent.iter().zip(&strides).map(|(&n, &s)| (1 + rng.below(n), s)).collect();
        for i in (1..dims.len()).rev() {
            dims.swap(i, rng.below(i + 1));
        }
        let sizes: Vec<usize> = dims.iter().map(|d| d.0).collect();
        let view_strides: Vec<usize> = dims.iter().map(|d| d.1).collect();
        for offset in 0..len {
            let Ok(view) = Layout::new(sizes.clone(), view_strides.clone(), offset) else { continue };
            if view.storage_extent() > len {
                continue;
            }
            cases += 1;
            let expected = CpuStorage::execute(&Prim::Copy, &[(&base, &view)]).unwrap().remove(0);
            let got = XlaStorage::execute(&Prim::Copy, &[(&on, &view)]).unwrap().remove(0).to_cpu().unwrap();
            assert_eq!(got, expected, "case {case}: reading {view:?}");
            let src_view = Layout::contiguous(sizes.clone());
            let mut expected = base.clone();
            expected.copy_from(&view, &src_base, &src_view).unwrap();
            let mut dst = XlaStorage::from_cpu(&base, device).unwrap();
            dst.copy_from(&view, &src_on, &src_view).unwrap();
            assert_eq!(dst.to_cpu().unwrap(), expected, "case {case}: writing through {view:?}");
            let mut expected = base.clone();
            expected.fill(&view, Scalar::Float(-7.25)).unwrap();
            let mut dst = XlaStorage::from_cpu(&base, device).unwrap();
            dst.fill(&view, Scalar::Float(-7.25)).unwrap();
            assert_eq!(dst.to_cpu().unwrap(), expected, "case {case}: filling {view:?}");
        }
    }
    assert!(cases > 300, "too few cases: {cases}");
}
