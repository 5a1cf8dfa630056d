//! The backend contract.

use crate::device::Device;
use crate::dtype::DType;
use crate::error::Result;
use crate::layout::Layout;
use crate::ops::Prim;
use crate::scalar::Scalar;

/// What a backend implements: storage of one dtype on one device, and the prims over it.
///
/// A storage is a flat buffer; which elements a tensor sees is given by a [`Layout`] passed beside it.
/// Layouts arrive validated (they never reach outside the storage), so a backend checks dtypes and
/// prim parameters, not bounds.
pub trait BackendStorage: Sized + Send + Sync + 'static {
    /// Element type of the buffer.
    fn dtype(&self) -> DType;

    /// Device holding the buffer.
    fn device(&self) -> Device;

    /// Number of elements in the buffer.
    fn len(&self) -> usize;

    /// True when the buffer holds no element.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Runs `prim` on strided inputs and returns its outputs as new contiguous storages.
    fn execute(prim: &Prim, inputs: &[(&Self, &Layout)]) -> Result<Vec<Self>>;

    /// Writes `src` (seen through `src_layout`, cast to this storage's dtype) into the elements of
    /// `self` selected by `dst_layout`; both layouts have the same shape. `src` never aliases `self`.
    fn copy_from(&mut self, dst_layout: &Layout, src: &Self, src_layout: &Layout) -> Result<()>;

    /// Sets every element selected by `layout` to `value` (converted with torch's casting rules).
    fn fill(&mut self, layout: &Layout, value: Scalar) -> Result<()>;
}
