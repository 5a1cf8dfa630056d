//! RIFF/WAVE files: integer PCM (8, 16, 24 or 32 bits) and IEEE float (32 or 64 bits), plain or
//! `WAVE_FORMAT_EXTENSIBLE`, any number of channels (averaged to mono, as `ffmpeg -ac 1` does).
//! Samples become floats in [-1, 1) as ffmpeg converts them (`x / 2^(bits - 1)`). A malformed file
//! is an error naming it, never a panic.

use std::path::Path;

use crate::error::{Error, Result};

/// A decoded WAV file.
#[derive(Debug, Clone, PartialEq)]
pub struct Wav {
    /// mono samples (channels averaged)
    pub samples: Vec<f32>,
    /// samples per second
    pub sampling_rate: u32,
}

/// The samples of the WAV files `paths`, each of which must be sampled at `sampling_rate` Hz
/// (a feature extractor's): another rate is an error saying how to resample it.
pub fn read_clips(paths: &[impl AsRef<Path>], sampling_rate: u32) -> Result<Vec<Vec<f32>>> {
    paths
        .iter()
        .map(|path| {
            let path = path.as_ref();
            let wav = read_wav(path)?;
            if wav.sampling_rate != sampling_rate {
                return Err(Error::format(
                    path,
                    format!(
                        "the audio is sampled at {} Hz, but the model's feature extractor expects {sampling_rate} Hz \
                         (resample it, e.g. `ffmpeg -i IN -ar {sampling_rate} OUT.wav`)",
                        wav.sampling_rate
                    ),
                ));
            }
            Ok(wav.samples)
        })
        .collect()
}

/// Reads the WAV file at `path` (see the module docs).
pub fn read_wav(path: &Path) -> Result<Wav> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    parse(&bytes).map_err(|msg| Error::format(path, msg))
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// The sample encodings read.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Encoding {
    Int(u16),
    Float(u16),
}

fn parse(b: &[u8]) -> std::result::Result<Wav, String> {
    if b.len() < 12 || &b[0..4] != b"RIFF" || &b[8..12] != b"WAVE" {
        return Err("not a WAV file (no RIFF/WAVE header)".into());
    }
    let (mut at, mut format, mut data) = (12usize, None, None);
    while at + 8 <= b.len() {
        let id = &b[at..at + 4];
        let size = u32_at(b, at + 4).ok_or("truncated chunk header")? as usize;
        let body = at + 8;
        // A data chunk whose declared size runs past the end (streamed files) is read to the end.
        let end = body.saturating_add(size).min(b.len());
        match id {
            b"fmt " => {
                let tag = u16_at(b, body).ok_or("truncated fmt chunk")?;
                let channels = u16_at(b, body + 2).ok_or("truncated fmt chunk")?;
                let rate = u32_at(b, body + 4).ok_or("truncated fmt chunk")?;
                let bits = u16_at(b, body + 14).ok_or("truncated fmt chunk")?;
                // WAVE_FORMAT_EXTENSIBLE: the sub-format GUID starts with the format tag.
                let tag = if tag == 0xFFFE {
                    u16_at(b, body + 24).ok_or("truncated extensible fmt chunk")?
                } else {
                    tag
                };
                let encoding = match (tag, bits) {
                    (1, 8 | 16 | 24 | 32) => Encoding::Int(bits),
                    (3, 32 | 64) => Encoding::Float(bits),
                    _ => {
                        return Err(format!(
                            "unsupported WAV encoding (format tag {tag}, {bits} bits): integer PCM of 8, 16, 24 or \
                             32 bits or float of 32 or 64 bits are read"
                        ))
                    }
                };
                if channels == 0 || rate == 0 {
                    return Err(format!("invalid WAV format: {channels} channels at {rate} Hz"));
                }
                format = Some((encoding, channels as usize, rate));
            }
            b"data" => data = Some(&b[body.min(b.len())..end]),
            _ => {}
        }
        // Chunks are padded to an even size.
        at = body.saturating_add(size).saturating_add(size & 1);
    }
    let (encoding, channels, rate) = format.ok_or("no fmt chunk")?;
    let data = data.ok_or("no data chunk")?;
    let width = match encoding {
        Encoding::Int(bits) | Encoding::Float(bits) => bits as usize / 8,
    };
    let frame = width * channels;
    let frames = data.len() / frame;
    let sample = |s: &[u8]| -> f64 {
        match encoding {
            Encoding::Int(8) => (f64::from(s[0]) - 128.0) / 128.0,
            Encoding::Int(16) => f64::from(i16::from_le_bytes([s[0], s[1]])) / 32768.0,
            Encoding::Int(24) => f64::from(i32::from_le_bytes([0, s[0], s[1], s[2]]) >> 8) / 8_388_608.0,
            Encoding::Int(_) => f64::from(i32::from_le_bytes([s[0], s[1], s[2], s[3]])) / 2_147_483_648.0,
            Encoding::Float(32) => f64::from(f32::from_le_bytes([s[0], s[1], s[2], s[3]])),
            Encoding::Float(_) => f64::from_le_bytes([s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]]),
        }
    };
    let samples = data[..frames * frame]
        .chunks_exact(frame)
        .map(|f| (f.chunks_exact(width).map(sample).sum::<f64>() / channels as f64) as f32)
        .collect();
    Ok(Wav { samples, sampling_rate: rate })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A WAV file's bytes: `fmt` (tag, channels, rate, bits) then `data`.
    fn wav(tag: u16, channels: u16, rate: u32, bits: u16, data: &[u8]) -> Vec<u8> {
        let mut fmt = Vec::new();
        fmt.extend(tag.to_le_bytes());
        fmt.extend(channels.to_le_bytes());
        fmt.extend(rate.to_le_bytes());
        fmt.extend((rate * u32::from(channels) * u32::from(bits) / 8).to_le_bytes());
        fmt.extend((channels * bits / 8).to_le_bytes());
        fmt.extend(bits.to_le_bytes());
        let mut b = b"RIFF\0\0\0\0WAVE".to_vec();
        b.extend(b"fmt ");
        b.extend((fmt.len() as u32).to_le_bytes());
        b.extend(fmt);
        b.extend(b"LIST\x03\0\0\0abc\0"); // an odd-sized chunk to skip, padded
        b.extend(b"data");
        b.extend((data.len() as u32).to_le_bytes());
        b.extend(data);
        b
    }

    #[test]
    fn pcm_and_float_samples_become_mono_floats() {
        let pcm16: Vec<u8> = [0i16, 16384, -32768, 32767].iter().flat_map(|s| s.to_le_bytes()).collect();
        let w = parse(&wav(1, 1, 16000, 16, &pcm16)).unwrap();
        assert_eq!(w.sampling_rate, 16000);
        assert_eq!(w.samples, vec![0.0, 0.5, -1.0, 32767.0 / 32768.0]);
        // Stereo is averaged; a trailing partial frame is dropped.
        let stereo: Vec<u8> =
            [16384i16, 0, -16384, -16384].iter().flat_map(|s| s.to_le_bytes()).chain([7]).collect();
        assert_eq!(parse(&wav(1, 2, 8000, 16, &stereo)).unwrap().samples, vec![0.25, -0.5]);
        let float: Vec<u8> = [0.25f32, -0.75].iter().flat_map(|s| s.to_le_bytes()).collect();
        assert_eq!(parse(&wav(3, 1, 16000, 32, &float)).unwrap().samples, vec![0.25, -0.75]);
        let pcm24 = [0x00, 0x00, 0x40, 0x00, 0x00, 0xC0];
        assert_eq!(parse(&wav(1, 1, 16000, 24, &pcm24)).unwrap().samples, vec![0.5, -0.5]);
        assert_eq!(parse(&wav(1, 1, 16000, 8, &[128, 0, 192])).unwrap().samples, vec![0.0, -1.0, 0.5]);
    }

    #[test]
    fn malformed_files_are_errors() {
        let good = wav(1, 1, 16000, 16, &[0, 0, 1, 0]);
        for (bytes, needle) in [
            (b"RIFX".to_vec(), "not a WAV file"),
            (good[..20].to_vec(), "truncated fmt chunk"),
            (wav(2, 1, 16000, 16, &[]), "unsupported WAV encoding"),
            (wav(1, 0, 16000, 16, &[]), "0 channels"),
            (good[..36].to_vec(), "no data chunk"),
        ] {
            let err = parse(&bytes).unwrap_err();
            assert!(err.contains(needle), "{err}");
        }
        // Every truncation is an error or a shorter file, never a panic.
        for n in 0..good.len() {
            let _ = parse(&good[..n]);
        }
    }
}
