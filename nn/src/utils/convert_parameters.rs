//! torch's `parameters_to_vector` and `vector_to_parameters` (`torch.nn.utils.convert_parameters`).

use oxtorch_autograd::no_grad;
use oxtorch_tensor::{Device, Error, Result, Tensor};

/// torch's `_check_param_device`: every parameter on the first one's device.
fn check_device(param: &Tensor, first: &mut Option<Device>) -> Result<()> {
    let device = param.device();
    if first.is_some_and(|d| d != device) {
        return Err(Error::msg(
            "Found two parameters on different devices, this is currently not supported.",
        ));
    }
    if first.is_none() {
        *first = Some(device);
    }
    Ok(())
}

/// Flattens `parameters` into one vector (torch's `parameters_to_vector`): each parameter viewed
/// as 1-D (`view(-1)`, so a parameter whose strides cannot be flattened is torch's view error),
/// concatenated in order. The result is differentiable: its gradient reaches the parameters. An
/// empty list is `torch.cat`'s error.
pub fn parameters_to_vector(parameters: &[Tensor]) -> Result<Tensor> {
    let mut device = None;
    let mut flat = Vec::with_capacity(parameters.len());
    for p in parameters {
        check_device(p, &mut device)?;
        flat.push(p.view([-1isize])?);
    }
    let refs: Vec<&Tensor> = flat.iter().collect();
    Tensor::cat(&refs, 0)
}

/// Copies consecutive slices of `vec` into `parameters` (torch's `vector_to_parameters`): the
/// next `numel` elements of `vec`'s first dim, viewed with the parameter's shape (torch's view
/// error when too few remain; extra elements are ignored, as in torch).
///
/// Unlike torch, which rebinds each parameter's `.data` to a view of `vec` (taking its dtype and
/// sharing its memory), the values are copied into the parameters without recording a gradient,
/// so they keep their own dtype and storage (and an optimizer holding them keeps working).
pub fn vector_to_parameters(vec: &Tensor, parameters: &[Tensor]) -> Result<()> {
    let mut device = None;
    let mut pointer = 0usize;
    let total = vec.dims().first().copied().unwrap_or(0);
    for p in parameters {
        check_device(p, &mut device)?;
        let n = p.numel();
        // Python slicing: both bounds clamp to the vector's length.
        let start = pointer.min(total);
        let len = n.min(total - start);
        let slice = vec.narrow(0, start as isize, len)?.view(p.dims())?;
        no_grad(|| p.copy_(&slice).map(|_| ()))?;
        pointer += n;
    }
    Ok(())
}
