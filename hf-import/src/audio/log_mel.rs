//! Whisper's input features (transformers' `WhisperFeatureExtractor`): the audio padded with
//! silence or cut to `chunk_length` seconds, a short-time Fourier transform (periodic Hann window
//! of `n_fft` samples every `hop_length`, centred with reflected edges, as `torch.stft`), the power
//! spectrum through a Slaney mel filter bank, `log10` (floored at 1e-10), clamped to 8 below its
//! maximum, and scaled as `(x + 4) / 4`: `[feature_size, chunk_length × sampling_rate / hop_length]`.

use std::f64::consts::PI;
use std::path::Path;

use oxtorch_tensor::Tensor;
use rayon::prelude::*;
use serde_json::Value;

use crate::error::{Error, Result};

/// The feature extractor's settings (`preprocessor_config.json`, transformers' defaults where a key
/// is absent).
#[derive(Debug, Clone, PartialEq)]
pub struct WhisperFeatureExtractor {
    /// mel bins (`feature_size`: 80, 128 for large-v3)
    pub feature_size: usize,
    /// samples per second the model was trained on
    pub sampling_rate: u32,
    /// samples between frames
    pub hop_length: usize,
    /// seconds of audio per input
    pub chunk_length: usize,
    /// the Fourier transform's size (and the window's)
    pub n_fft: usize,
    /// what the audio is padded with
    pub padding_value: f32,
}

impl Default for WhisperFeatureExtractor {
    fn default() -> Self {
        WhisperFeatureExtractor {
            feature_size: 80,
            sampling_rate: 16000,
            hop_length: 160,
            chunk_length: 30,
            n_fft: 400,
            padding_value: 0.0,
        }
    }
}

impl WhisperFeatureExtractor {
    /// Reads `preprocessor_config.json` in `dir` (the defaults without one).
    pub fn from_model_dir(dir: &Path) -> Result<Self> {
        let path = dir.join("preprocessor_config.json");
        let Ok(text) = std::fs::read_to_string(&path) else { return Ok(Self::default()) };
        let json: Value = serde_json::from_str(&text).map_err(|e| Error::format(&path, e.to_string()))?;
        let d = Self::default();
        let count = |key: &str, default: usize| -> Result<usize> {
            match json.get(key) {
                None | Some(Value::Null) => Ok(default),
                Some(v) => {
                    v.as_u64().and_then(|n| usize::try_from(n).ok()).filter(|&n| n > 0).ok_or_else(|| {
                        Error::format(&path, format!("\"{key}\" must be a positive integer, got {v}"))
                    })
                }
            }
        };
        let e = WhisperFeatureExtractor {
            feature_size: count("feature_size", d.feature_size)?,
            sampling_rate: u32::try_from(count("sampling_rate", d.sampling_rate as usize)?)
                .map_err(|_| Error::format(&path, "\"sampling_rate\" is too large"))?,
            hop_length: count("hop_length", d.hop_length)?,
            chunk_length: count("chunk_length", d.chunk_length)?,
            n_fft: count("n_fft", d.n_fft)?,
            padding_value: json.get("padding_value").and_then(Value::as_f64).unwrap_or(0.0) as f32,
        };
        if e.n_fft < 2 || e.samples() / e.hop_length == 0 || e.samples() > 1 << 28 {
            return Err(Error::format(
                &path,
                format!("n_fft {} and {} samples per chunk do not make frames", e.n_fft, e.samples()),
            ));
        }
        Ok(e)
    }

    /// Samples per input (`chunk_length × sampling_rate`).
    pub fn samples(&self) -> usize {
        self.chunk_length.saturating_mul(self.sampling_rate as usize)
    }

    /// Frames per input.
    pub fn frames(&self) -> usize {
        self.samples() / self.hop_length
    }

    /// The log-mel features `[feature_size, frames]` (float32) of one clip of mono samples at
    /// [`WhisperFeatureExtractor::sampling_rate`], padded or cut to `chunk_length` seconds.
    pub fn features(&self, samples: &[f32]) -> Result<Tensor> {
        let n = self.samples();
        if self.n_fft < 2 || self.hop_length == 0 || self.frames() == 0 || self.feature_size == 0 {
            return Err(Error::Config(format!(
                "feature extractor settings make no frames: n_fft {}, hop_length {}, {n} samples per chunk, {} mel bins",
                self.n_fft, self.hop_length, self.feature_size
            )));
        }
        let mut x: Vec<f64> = samples.iter().take(n).map(|&s| f64::from(s)).collect();
        x.resize(n, f64::from(self.padding_value));
        // `torch.stft(center=True, pad_mode="reflect")`: n_fft / 2 reflected samples at each end.
        let half = self.n_fft / 2;
        if n <= half {
            return Err(Error::Input(format!(
                "{n} samples per chunk are too few for reflect padding of {half} (n_fft {})",
                self.n_fft
            )));
        }
        let mut padded = Vec::with_capacity(n + 2 * half);
        padded.extend((1..=half).rev().map(|i| x[i]));
        padded.extend_from_slice(&x);
        padded.extend((n - 1 - half..n - 1).rev().map(|i| x[i]));
        let (fft, bins, frames, mel) = (self.n_fft, self.n_fft / 2 + 1, self.frames(), self.feature_size);
        // The windowed frames `[frames, n_fft]` (every frame but the last, which transformers
        // drops) times the DFT's cosines and sines `[n_fft, 2 × bins]` (periodic Hann window), in
        // float64: one matrix product.
        let window: Vec<f64> =
            (0..fft).map(|i| 0.5 - 0.5 * (2.0 * PI * i as f64 / fft as f64).cos()).collect();
        let mut framed = vec![0f64; frames * fft];
        framed.par_chunks_mut(fft).enumerate().for_each(|(t, row)| {
            for (i, v) in row.iter_mut().enumerate() {
                *v = padded[t * self.hop_length + i] * window[i];
            }
        });
        let mut twiddles = vec![0f64; fft * 2 * bins];
        for i in 0..fft {
            for k in 0..bins {
                let (sin, cos) = (2.0 * PI * ((k * i) % fft) as f64 / fft as f64).sin_cos();
                twiddles[i * 2 * bins + 2 * k] = cos;
                twiddles[i * 2 * bins + 2 * k + 1] = -sin;
            }
        }
        let spectrum = Tensor::from_vec(framed, [frames, fft])?
            .matmul(&Tensor::from_vec(twiddles, [fft, 2 * bins])?)?
            .to_vec::<f64>()?;
        let power: Vec<f64> = spectrum.chunks_exact(2).map(|c| c[0] * c[0] + c[1] * c[1]).collect();
        let filters: Vec<f64> =
            mel_filter_bank(bins, mel, 0.0, 8000.0, self.sampling_rate).into_iter().map(f64::from).collect();
        let energies = Tensor::from_vec(power, [frames, bins])?
            .matmul(&Tensor::from_vec(filters, [bins, mel])?)?
            .to_vec::<f64>()?;
        let columns: Vec<Vec<f64>> =
            energies.chunks_exact(mel).map(|c| c.iter().map(|e| e.max(1e-10).log10()).collect()).collect();
        let max = columns.iter().flatten().copied().fold(f64::NEG_INFINITY, f64::max);
        let mut out = vec![0f32; mel * frames];
        for (t, column) in columns.iter().enumerate() {
            for (j, &v) in column.iter().enumerate() {
                out[j * frames + t] = ((v.max(max - 8.0) + 4.0) / 4.0) as f32;
            }
        }
        Ok(Tensor::from_vec(out, [mel, frames])?)
    }

    /// [`WhisperFeatureExtractor::features`] of each clip, stacked `[clips, feature_size, frames]`.
    pub fn batch(&self, clips: &[Vec<f32>]) -> Result<Tensor> {
        let features = clips.iter().map(|c| self.features(c)).collect::<Result<Vec<_>>>()?;
        Ok(Tensor::stack(&features.iter().collect::<Vec<_>>(), 0)?)
    }
}

/// Slaney's mel scale: linear to 1 kHz, logarithmic above.
fn hertz_to_mel(f: f64) -> f64 {
    if f >= 1000.0 {
        15.0 + (f / 1000.0).ln() * (27.0 / 6.4f64.ln())
    } else {
        3.0 * f / 200.0
    }
}

fn mel_to_hertz(m: f64) -> f64 {
    if m >= 15.0 {
        1000.0 * ((6.4f64.ln() / 27.0) * (m - 15.0)).exp()
    } else {
        200.0 * m / 3.0
    }
}

/// transformers' `mel_filter_bank(num_frequency_bins, num_mel_filters, min_frequency,
/// max_frequency, sampling_rate, norm="slaney", mel_scale="slaney")`: triangular filters
/// `[bins, filters]` (row-major), float32 as transformers keeps them.
pub fn mel_filter_bank(
    bins: usize,
    filters: usize,
    min_hz: f64,
    max_hz: f64,
    sampling_rate: u32,
) -> Vec<f32> {
    let linspace = |a: f64, b: f64, n: usize| -> Vec<f64> {
        let step = if n > 1 { (b - a) / (n - 1) as f64 } else { 0.0 };
        (0..n).map(|i| if i + 1 == n && n > 1 { b } else { a + step * i as f64 }).collect()
    };
    let mels = linspace(hertz_to_mel(min_hz), hertz_to_mel(max_hz), filters + 2);
    let centres: Vec<f64> = mels.iter().map(|&m| mel_to_hertz(m)).collect();
    let fft_freqs = linspace(0.0, f64::from(sampling_rate / 2), bins);
    let mut out = vec![0f32; bins * filters];
    for (k, &f) in fft_freqs.iter().enumerate() {
        for j in 0..filters {
            let down = -(centres[j] - f) / (centres[j + 1] - centres[j]);
            let up = (centres[j + 2] - f) / (centres[j + 2] - centres[j + 1]);
            let tri = down.min(up).max(0.0) as f32;
            let enorm = 2.0 / (centres[j + 2] - centres[j]);
            out[k * filters + j] = (f64::from(tri) * enorm) as f32;
        }
    }
    out
}
