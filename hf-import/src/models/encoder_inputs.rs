//! An encoder's per-token inputs, moved to its device and checked against `input_ids`.

use oxtorch_tensor::{Device, Tensor};

use super::decoder::batch_seq;
use crate::error::{Error, Result};

/// The inputs of an encoder's forward on the weights' device: `input_ids` `[batch, seq]`, and
/// each optional input checked to be `[batch, seq]` too (`position_ids` may also be one row shared
/// by the batch, `[1, seq]` or `[seq]`, as transformers allows; it is then `[1, seq]`).
pub(crate) struct EncoderInputs {
    pub batch: usize,
    pub seq: usize,
    pub input_ids: Tensor,
    pub attention_mask: Option<Tensor>,
    pub token_type_ids: Option<Tensor>,
    pub position_ids: Option<Tensor>,
}

impl EncoderInputs {
    /// Checks the inputs' shapes (an error names the input and both shapes) and moves them to
    /// `device`.
    pub fn on(
        device: Device,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        token_type_ids: Option<&Tensor>,
        position_ids: Option<&Tensor>,
    ) -> Result<Self> {
        let (b, s) = batch_seq(input_ids)?;
        let named = [
            ("attention_mask", attention_mask),
            ("token_type_ids", token_type_ids),
            ("position_ids", position_ids),
        ];
        for (name, t) in named {
            let Some(t) = t else { continue };
            let shared_row = name == "position_ids" && (t.dims() == [1, s] || t.dims() == [s]);
            if t.dims() != [b, s] && !shared_row {
                let also =
                    if name == "position_ids" { format!(", [1, {s}] or [{s}]") } else { String::new() };
                return Err(Error::Input(format!(
                    "{name} must have shape [{b}, {s}]{also}, got {:?}",
                    t.dims()
                )));
            }
        }
        let on_device = |t: Option<&Tensor>| t.map(|t| t.to(device)).transpose();
        Ok(EncoderInputs {
            batch: b,
            seq: s,
            input_ids: input_ids.to(device)?,
            attention_mask: on_device(attention_mask)?,
            token_type_ids: on_device(token_type_ids)?,
            position_ids: on_device(position_ids)?
                .map(|p| if p.rank() == 1 { p.unsqueeze(0) } else { Ok(p) })
                .transpose()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxtorch_tensor::DType;

    fn ids(b: usize, s: usize) -> Tensor {
        Tensor::zeros([b, s], DType::I64).unwrap()
    }

    #[test]
    fn shapes_are_checked_against_input_ids() {
        let x = ids(2, 3);
        let inputs = EncoderInputs::on(Device::Cpu, &x, Some(&ids(2, 3)), None, Some(&ids(1, 3))).unwrap();
        assert_eq!((inputs.batch, inputs.seq), (2, 3));
        assert!(inputs.attention_mask.is_some() && inputs.token_type_ids.is_none());
        let err = |r: Result<EncoderInputs>| r.err().map(|e| e.to_string()).unwrap_or_default();
        let e = err(EncoderInputs::on(Device::Cpu, &x, Some(&ids(2, 4)), None, None));
        assert!(e.contains("attention_mask must have shape [2, 3], got [2, 4]"), "{e}");
        let e = err(EncoderInputs::on(Device::Cpu, &x, None, Some(&ids(1, 3)), None));
        assert!(e.contains("token_type_ids must have shape [2, 3], got [1, 3]"), "{e}");
        let e = err(EncoderInputs::on(Device::Cpu, &x, None, None, Some(&ids(2, 1))));
        assert!(e.contains("position_ids must have shape [2, 3], [1, 3] or [3], got [2, 1]"), "{e}");
        let row = Tensor::zeros([3], DType::I64).unwrap();
        let inputs = EncoderInputs::on(Device::Cpu, &x, None, None, Some(&row)).unwrap();
        assert_eq!(inputs.position_ids.unwrap().dims(), [1, 3]);
        let e =
            err(EncoderInputs::on(Device::Cpu, &Tensor::zeros([3], DType::I64).unwrap(), None, None, None));
        assert!(e.contains("input_ids must be a 2-D integer tensor"), "{e}");
    }
}
