//! The x-vector head of wav2vec 2.0, data2vec-audio, UniSpeech-SAT and WavLM (`*ForXVector`,
//! speaker verification: microsoft/wavlm-base-plus-sv): the encoder's frames projected, through
//! TDNN layers (dilated 1-D convolutions, each ReLU-activated, no padding), pooled into each row's
//! mean and standard deviation over its kept frames, projected to the speaker `embeddings` and
//! classified (`logits`).

use oxtorch_tensor::Tensor;

use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::Linear;
use crate::weights::Vars;

/// One TDNN layer: `kernel` as a convolution weight `[out, in, kernel]`, its bias, its dilation.
#[derive(Debug, Clone)]
struct Tdnn {
    weight: Tensor,
    bias: Tensor,
    dilation: usize,
}

/// The x-vector head (see the module docs).
#[derive(Debug, Clone)]
pub(super) struct XVector {
    projector: Linear,
    tdnn: Vec<Tdnn>,
    /// the frames transformers counts off each row's length: the kernels' widths less one each
    /// (without the dilations, as `_get_tdnn_output_lengths` does)
    length_loss: usize,
    feature_extractor: Linear,
    classifier: Linear,
}

impl XVector {
    /// `projector`, `tdnn.{i}.kernel`, `feature_extractor` and `classifier` under `vars`, sized by
    /// `tdnn_dim`, `tdnn_kernel`, `tdnn_dilation` and `xvector_output_dim` for a `hidden`-wide encoder.
    pub(super) fn load(vars: &Vars<'_>, cfg: &Config, hidden: usize) -> Result<Self> {
        let dims = cfg.usize_list_or("tdnn_dim", &[512, 512, 512, 512, 1500], 1)?;
        let kernels = cfg.usize_list_or("tdnn_kernel", &[5, 3, 3, 1, 1], 1)?;
        let dilations = cfg.usize_list_or("tdnn_dilation", &[1, 2, 3, 1, 1], 1)?;
        if kernels.len() != dims.len() || dilations.len() != dims.len() {
            return Err(Error::Config(format!(
                "tdnn_dim ({}), tdnn_kernel ({}) and tdnn_dilation ({}) must have one entry per TDNN layer",
                dims.len(),
                kernels.len(),
                dilations.len()
            )));
        }
        let output = cfg.usize_or("xvector_output_dim", 512)?;
        let tdnn = (0..dims.len())
            .map(|i| {
                let (input, out, k) = (dims[i.saturating_sub(1)], dims[i], kernels[i]);
                let kernel = vars.pp("tdnn").pp(i).pp("kernel");
                // `nn.Linear(in · k, out)`, its weight read as `[out, k, in]`.
                let weight = kernel.get_matrix("weight", &[out, input * k])?;
                Ok(Tdnn {
                    weight: weight.reshape([out, k, input])?.transpose(1, 2)?.contiguous()?,
                    bias: kernel.get("bias", &[out])?,
                    dilation: dilations[i],
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let last = *dims.last().expect("tdnn_dim is not empty");
        Ok(XVector {
            projector: Linear::load(&vars.pp("projector"), hidden, dims[0], true)?,
            tdnn,
            length_loss: kernels.iter().map(|k| k - 1).sum(),
            feature_extractor: Linear::load(&vars.pp("feature_extractor"), 2 * last, output, true)?,
            classifier: Linear::load(&vars.pp("classifier"), output, output, true)?,
        })
    }

    /// `(logits, embeddings)`, each `[batch, xvector_output_dim]`, of the encoder's frames `h`
    /// `[batch, frames, hidden]`; `kept` gives each row's kept frames (`None`: all of them).
    pub(super) fn forward(&self, h: &Tensor, kept: Option<&[usize]>) -> Result<(Tensor, Tensor)> {
        let frames = h.dims()[1];
        let reach: usize = self.tdnn.iter().map(|t| t.dilation * (t.weight.dims()[2] - 1)).sum();
        if frames < reach + 2 {
            return Err(Error::Input(format!(
                "the x-vector head needs at least {} frames (its TDNN layers span {}, then a standard \
                 deviation over two), got {frames}",
                reach + 2,
                reach + 1
            )));
        }
        let mut x = self.projector.forward(h)?.transpose(1, 2)?;
        for t in &self.tdnn {
            x = x.conv1d(&t.weight, Some(&t.bias), &[1], 0, &[t.dilation], 1)?.relu()?;
        }
        let x = x.transpose(1, 2)?;
        // (An empty batch pools to empty statistics.)
        let (mean, std) = match kept.filter(|k| !k.is_empty()) {
            None => (x.mean([1], false)?, x.std([1], 1.0, false)?),
            Some(kept) => {
                let left = frames - reach;
                let mut rows = Vec::with_capacity(kept.len());
                for (i, &k) in kept.iter().enumerate() {
                    let n = k.saturating_sub(self.length_loss).min(left);
                    if n < 2 {
                        return Err(Error::Input(format!(
                            "row {i} keeps {k} frames, too few for the x-vector head's statistics (it \
                             counts {} off for its TDNN layers and needs two left)",
                            self.length_loss
                        )));
                    }
                    rows.push(x.narrow(0, i as isize, 1)?.narrow(1, 0, n)?);
                }
                let means =
                    rows.iter().map(|r| r.mean([1], false)).collect::<oxtorch_tensor::Result<Vec<_>>>()?;
                let stds = rows
                    .iter()
                    .map(|r| r.std([1], 1.0, false))
                    .collect::<oxtorch_tensor::Result<Vec<_>>>()?;
                (
                    Tensor::cat(&means.iter().collect::<Vec<_>>(), 0)?,
                    Tensor::cat(&stds.iter().collect::<Vec<_>>(), 0)?,
                )
            }
        };
        let pooled = Tensor::cat(&[&mean, &std], 1)?;
        let embeddings = self.feature_extractor.forward(&pooled)?;
        Ok((self.classifier.forward(&embeddings)?, embeddings))
    }
}
