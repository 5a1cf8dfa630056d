//! Audio in: WAV files read into mono float samples ([`read_wav`]) and Whisper's log-mel
//! spectrogram of them ([`WhisperFeatureExtractor`]), or the normalised raw samples wav2vec 2.0
//! and HuBERT read ([`RawAudioFeatureExtractor`]), so that speech models run from audio files
//! without Python.

mod log_mel;
mod raw_features;
mod wav;

pub use log_mel::{mel_filter_bank, WhisperFeatureExtractor};
pub use raw_features::RawAudioFeatureExtractor;
pub use wav::{read_clips, read_wav, Wav};
