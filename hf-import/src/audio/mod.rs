//! Audio in: WAV files read into mono float samples ([`read_wav`]) and Whisper's log-mel
//! spectrogram of them ([`WhisperFeatureExtractor`]), so that speech models run from audio files
//! without Python.

mod log_mel;
mod wav;

pub use log_mel::{mel_filter_bank, WhisperFeatureExtractor};
pub use wav::{read_wav, Wav};
