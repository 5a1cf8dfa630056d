//! The `hf-import` binary end to end: `forward` matches transformers, `convert` round-trips, `inspect`
//! describes, and bad input gives one error line, a non-zero exit and no output file.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{assert_close, fixture, golden, read_all};
use oxtorch_hf_import::weights::write_safetensors;

fn hf_import(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hf-import")).args(args).output().expect("the hf-import binary runs")
}

/// A fresh temporary folder for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("oxtorch-hf-cli-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes the golden inputs of `name` to `dir/inputs.safetensors`.
fn inputs_file(name: &str, dir: &Path) -> PathBuf {
    let (inputs, _) = golden(name);
    let path = dir.join("inputs.safetensors");
    write_safetensors(&path, &inputs.into_iter().collect::<Vec<_>>(), None).unwrap();
    path
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `forward` on `model` (a folder) compared with the goldens of fixture `name`; its stderr.
fn forward_matches(model: &Path, name: &str, dir: &Path) -> String {
    let inputs = inputs_file(name, dir);
    let output = dir.join("out.safetensors");
    let out = hf_import(&[
        "forward",
        model.to_str().unwrap(),
        "--inputs",
        inputs.to_str().unwrap(),
        "--output",
        output.to_str().unwrap(),
        "--hidden-states",
        "--device",
        "cpu",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let mut actual = read_all(&output);
    let (inputs, expected) = golden(name);
    // (An output under an input's name, Qwen2-Audio's `attention_mask`, echoes that input.)
    actual.retain(|k, _| !inputs.contains_key(k));
    assert_eq!(actual.keys().collect::<Vec<_>>(), expected.keys().collect::<Vec<_>>());
    for (k, t) in &actual {
        assert_eq!(t.dtype(), oxtorch_tensor::DType::F32, "{k}");
        assert_close(&format!("{name} {k}"), t, &expected[k], 1e-4, 1e-4);
    }
    stderr(&out)
}

#[test]
fn forward_writes_transformers_outputs() {
    let dir = scratch("forward");
    for name in ["bert", "llama", "qwen2", "vit_cls", "clip", "t5", "whisper"] {
        forward_matches(&fixture(name), name, &dir);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A masked-LM config over a checkpoint without the head (all-mpnet-base-v2's folder: config.json
/// names `MPNetForMaskedLM`, no `lm_head.*`; `sentence_mpnet` holds `mpnet`'s weights) runs the
/// base model with a note, as transformers' `AutoModel` loads it; a head that is only partly there
/// stays an error naming the missing tensor.
#[test]
fn forward_on_a_headless_masked_lm_checkpoint_runs_the_base_model() {
    let dir = scratch("headless");
    let note = forward_matches(&fixture("sentence_mpnet"), "mpnet", &dir);
    assert!(
        note.contains("names MPNetForMaskedLM, but the checkpoint holds none of its head's tensors"),
        "{note}"
    );
    let partial = dir.join("partial");
    std::fs::create_dir_all(&partial).unwrap();
    std::fs::copy(fixture("mpnet_mlm").join("config.json"), partial.join("config.json")).unwrap();
    let mut tensors = read_all(&fixture("mpnet_mlm").join("model.safetensors"));
    assert!(tensors.remove("lm_head.dense.weight").is_some());
    write_safetensors(&partial.join("model.safetensors"), &tensors.into_iter().collect::<Vec<_>>(), None)
        .unwrap();
    let inputs = inputs_file("mpnet_mlm", &dir);
    forward_fails(
        &dir,
        &partial,
        &inputs,
        &[],
        "tensor 'lm_head.dense.weight' is missing from the checkpoint",
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Outputs get a new file's usual permissions (not the temporary file's 0600); a device is
/// written in place, never replaced; a folder is refused.
#[cfg(unix)]
#[test]
fn outputs_are_ordinary_files_and_devices_stay_devices() {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    let dir = scratch("modes");
    let inputs = inputs_file("llama", &dir);
    let run = |output: &Path| {
        hf_import(&[
            "forward",
            fixture("llama").to_str().unwrap(),
            "--inputs",
            inputs.to_str().unwrap(),
            "--output",
            output.to_str().unwrap(),
        ])
    };
    let output = dir.join("out.safetensors");
    assert!(run(&output).status.success());
    let umask = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("Umask:").map(|v| v.trim().to_string())))
        .and_then(|v| u32::from_str_radix(&v, 8).ok())
        .unwrap_or(0o022);
    let mode = std::fs::metadata(&output).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o666 & !umask);
    let null = Path::new("/dev/null");
    if null.exists() {
        assert!(run(null).status.success());
        assert!(std::fs::metadata(null).unwrap().file_type().is_char_device());
    }
    let out = run(&dir);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("is a directory"), "{}", stderr(&out));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn forward_in_bf16_writes_float32_close_to_transformers() {
    let dir = scratch("bf16");
    let inputs = inputs_file("mistral", &dir);
    let output = dir.join("out.safetensors");
    let out = hf_import(&[
        "forward",
        fixture("mistral").to_str().unwrap(),
        "--inputs",
        inputs.to_str().unwrap(),
        "--output",
        output.to_str().unwrap(),
        "--dtype",
        "bf16",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let logits = read_all(&output)["logits"].clone();
    assert_eq!(logits.dtype(), oxtorch_tensor::DType::F32);
    let (_, expected) = golden("mistral");
    assert_close("bf16 logits", &logits, &expected["logits"], 0.1, 0.05);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn convert_bin_to_safetensors_then_forward() {
    let dir = scratch("convert");
    let out_dir = dir.join("llama-st");
    let out = hf_import(&["convert", fixture("llama").to_str().unwrap(), "--out", out_dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(out_dir.join("model.safetensors").is_file());
    assert!(!out_dir.join("pytorch_model.bin").exists());
    forward_matches(&out_dir, "llama", &dir);

    let bf16_dir = dir.join("qwen2-bf16");
    let out = hf_import(&[
        "convert",
        fixture("qwen2").to_str().unwrap(),
        "--out",
        bf16_dir.to_str().unwrap(),
        "--dtype",
        "bf16",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let tensors = read_all(&bf16_dir.join("model.safetensors"));
    assert_eq!(tensors.len(), 2 + 2 * 12 + 1, "shards merged into one file");
    assert!(tensors.values().all(|t| t.dtype() == oxtorch_tensor::DType::BF16));
    let config = std::fs::read_to_string(bf16_dir.join("config.json")).unwrap();
    assert!(config.contains("\"dtype\": \"bfloat16\""), "{config}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `convert` into the model's own folder, by whatever path, would copy its files onto themselves
/// (emptying them): refused before anything is written.
#[test]
fn convert_refuses_to_write_over_the_model() {
    let dir = scratch("convert-self");
    let model = dir.join("model");
    std::fs::create_dir_all(&model).unwrap();
    let files = ["config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"];
    for f in files {
        std::fs::copy(fixture("llama_tied").join(f), model.join(f)).unwrap();
    }
    let contents = || files.map(|f| std::fs::read(model.join(f)).unwrap());
    let before = contents();
    let mut outs = vec![model.clone(), model.join("."), dir.join("model").join("..").join("model")];
    #[cfg(unix)]
    {
        let alias = dir.join("alias");
        std::os::unix::fs::symlink(&model, &alias).unwrap();
        outs.push(alias);
    }
    for out in &outs {
        let res = hf_import(&["convert", model.to_str().unwrap(), "--out", out.to_str().unwrap()]);
        let err = stderr(&res);
        assert_eq!(res.status.code(), Some(1), "{}: {err}", out.display());
        assert!(err.starts_with("error: ") && err.contains("is the model's own folder"), "{err}");
    }
    assert!(contents() == before, "the model's files are unchanged");
    assert_eq!(std::fs::read_dir(&model).unwrap().count(), files.len(), "nothing was added");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn inspect_describes_the_checkpoint() {
    let out = hf_import(&["inspect", fixture("qwen3").to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("architecture: Qwen3ForCausalLM"), "{text}");
    assert!(text.contains("parameters:   28000"), "{text}");
    assert!(text.contains("model.layers.1.self_attn.q_norm.weight"), "{text}");
    assert!(text.contains("bf16"), "{text}");
}

/// Runs `forward` with `args` replacing parts of a valid call; it must fail with `needle` in one
/// error line and leave no output file.
fn forward_fails(dir: &Path, model: &Path, inputs: &Path, extra: &[&str], needle: &str) {
    command_fails("forward", dir, model, inputs, extra, needle);
}

/// `hf-import COMMAND MODEL --inputs INPUTS --output ... EXTRA` fails with one error line holding
/// `needle`, and writes no output.
fn command_fails(command: &str, dir: &Path, model: &Path, inputs: &Path, extra: &[&str], needle: &str) {
    let output = dir.join("never.safetensors");
    let mut args = vec![
        command,
        model.to_str().unwrap(),
        "--inputs",
        inputs.to_str().unwrap(),
        "--output",
        output.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let out = hf_import(&args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.starts_with("error: ") && err.lines().count() == 1, "{err}");
    assert!(err.contains(needle), "expected '{needle}' in: {err}");
    assert!(!output.exists(), "no partial output");
}

#[test]
fn bad_input_gives_one_error_line_and_no_output() {
    let dir = scratch("bad");
    let good_inputs = inputs_file("llama", &dir);
    let llama = fixture("llama");

    // Inputs the model does not take, and float inputs.
    let expected = fixture("llama").join("expected.safetensors");
    forward_fails(&dir, &llama, &expected, &[], "unexpected input 'hidden_states.0'");
    let floats = dir.join("floats.safetensors");
    let ids = oxtorch_tensor::Tensor::zeros([1, 3], oxtorch_tensor::DType::F32).unwrap();
    write_safetensors(&floats, &[("input_ids".to_string(), ids)], None).unwrap();
    forward_fails(&dir, &llama, &floats, &[], "input 'input_ids' must be an integer tensor");
    let big = dir.join("big.safetensors");
    let ids = oxtorch_tensor::Tensor::from_vec(vec![1i64, 500, 3], [1, 3]).unwrap();
    write_safetensors(&big, &[("input_ids".to_string(), ids)], None).unwrap();
    forward_fails(&dir, &llama, &big, &[], "id 500 is out of range for an embedding table of 100 rows");

    // A model found nowhere, an unsupported model_type, a bad dtype or device.
    forward_fails(
        &dir,
        Path::new("no-such-org/no-such-model"),
        &good_inputs,
        &[],
        "models--no-such-org--no-such-model",
    );
    let odd = dir.join("odd");
    std::fs::create_dir_all(&odd).unwrap();
    std::fs::write(odd.join("config.json"), r#"{"model_type": "sew-d"}"#).unwrap();
    std::fs::copy(fixture("llama_tied").join("model.safetensors"), odd.join("model.safetensors")).unwrap();
    forward_fails(
        &dir,
        &odd,
        &good_inputs,
        &[],
        "model_type \"sew-d\" is not supported (supported: afmoe, albert, apertus, audio-spectrogram-transformer, arcee, axk1, aya_vision, bamba, bart, beit, bert, biogpt, bit, bitnet, blenderbot, blenderbot-small, bloom, camembert, clip, clip_text_model, clip_vision_model, codegen, convnext, convnextv2, cohere, cohere2, cohere2_moe, cvt, cwm, data2vec-audio, data2vec-vision, data2vec-text, dbrx, deberta, deberta-v2, deepseek_v2, deepseek_v3, deit, depth_anything, diffllama, dinov2, dinov2_with_registers, dinov3_vit, distilbert, dots1, dpt, efficientnet, electra, ernie, ernie4_5, ernie4_5_moe, esm, eurobert, exaone, exaone4, exaone_moe, falcon, falcon_h1, falcon_mamba, flex_olmo, flint, fuyu, gemma, gemma2, gemma3, gemma3_text, gemma3n, gemma3n_text, gemma4, gemma4_text, glm, glm4, glm4_moe, glm4_moe_lite, glpn, gpt2, gpt_bigcode, gpt_neo, gpt_neox, gpt_oss, gptj, granite, granite_swa, granitemoe, granitemoe_swa, granitemoehybrid, granitemoeshared, gte, helium, hubert, hunyuan_v1_dense, hunyuan_v1_moe, hy_v3, hyperclovax, idefics3, ijepa, internlm3, internvl, iquestcoder, jais2, jamba, kolibri1, laguna, levit, lfm2, lfm2_moe, lfm2_vl, lfm3, llama, llama4, llama4_text, llava, llava_next, llava_next_video, llava_onevision, m2m_100, mamba, mamba2, marian, mbart, megatron-bert, mellum, mimo_v2_flash, minicpm3, minimax_m2, ministral, ministral3, mistral, mistral3, mistral4, mixtral, mllama, mobilenet_v1, mobilenet_v2, mobilevit, mobilevitv2, modernbert, modernbert-decoder, mpnet, mpt, mt5, nanochat, nemotron, nemotron_h, nomic_bert, olmo, olmo2, olmo3, olmoe, openai-gpt, opt, paligemma, pegasus, persimmon, phi, phi3, phimoe, plbart, poolformer, pvt_v2, qwen2, qwen2_5_vl, qwen2_audio, qwen2_moe, qwen2_vl, qwen3, qwen3_5, qwen3_5_moe, qwen3_5_moe_text, qwen3_5_text, qwen3_moe, qwen3_next, qwen3_vl, qwen3_vl_moe, regnet, resnet, roberta, roberta-prelayernorm, sarvam_mla, sarvam_moe, segformer, seed_oss, sew, siglip, siglip_text_model, siglip_vision_model, smollm3, smolvlm, solar_open, stablelm, starcoder2, swin, swinv2, t5, umt5, unispeech, unispeech-sat, vaultgemma, vipllava, vit, vit_mae, vit_msn, voxtral, wav2vec2, wav2vec2-conformer, wavlm, whisper, xglm, xlm-roberta, xlm-roberta-xl, yolos, youtu)",
    );
    forward_fails(&dir, &llama, &good_inputs, &["--dtype", "f8"], "unknown dtype 'f8'");
    forward_fails(&dir, &llama, &good_inputs, &["--device", "cuda"], "--device");

    // Corrupt weights: truncated, a header that lies, a config that disagrees with the shapes.
    let model = fixture("llama_tied");
    let broken = dir.join("broken");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::copy(model.join("config.json"), broken.join("config.json")).unwrap();
    let bytes = std::fs::read(model.join("model.safetensors")).unwrap();
    std::fs::write(broken.join("model.safetensors"), &bytes[..bytes.len() / 2]).unwrap();
    forward_fails(&dir, &broken, &good_inputs, &[], "model.safetensors: invalid safetensors");
    let mut lying = bytes.clone();
    lying[8..16].copy_from_slice(b"{\"x\":{\"d");
    std::fs::write(broken.join("model.safetensors"), &lying).unwrap();
    forward_fails(&dir, &broken, &good_inputs, &[], "invalid safetensors");
    let huge_header = [&(u64::MAX / 2).to_le_bytes()[..], &bytes[8..]].concat();
    std::fs::write(broken.join("model.safetensors"), huge_header).unwrap();
    forward_fails(&dir, &broken, &good_inputs, &[], "invalid safetensors");
    // A truncated pytorch_model.bin.
    let bin_dir = dir.join("broken-bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    std::fs::copy(llama.join("config.json"), bin_dir.join("config.json")).unwrap();
    let bin = std::fs::read(llama.join("pytorch_model.bin")).unwrap();
    std::fs::write(bin_dir.join("pytorch_model.bin"), &bin[..bin.len() - 300]).unwrap();
    forward_fails(&dir, &bin_dir, &good_inputs, &[], "pytorch_model.bin: invalid PyTorch checkpoint");
    std::fs::write(broken.join("model.safetensors"), &bytes).unwrap();
    let config = std::fs::read_to_string(model.join("config.json")).unwrap();
    // The config with one key's text replaced.
    let config_with = |from: &str, to: &str| {
        std::fs::write(broken.join("config.json"), config.replace(from, to)).unwrap();
    };
    config_with("\"intermediate_size\": 64", "\"intermediate_size\": 48");
    forward_fails(
        &dir,
        &broken,
        &good_inputs,
        &[],
        "tensor 'model.layers.0.mlp.gate_proj.weight' has shape [64, 32] in the checkpoint, but the config implies [48, 32]",
    );
    // A layer count no memory could hold fails before anything is allocated per layer.
    config_with("\"num_hidden_layers\": 2", "\"num_hidden_layers\": 1000000000000");
    forward_fails(
        &dir,
        &broken,
        &good_inputs,
        &[],
        "\"num_hidden_layers\" is 1000000000000; at most 16384 layers are supported",
    );
    // Head counts whose products overflow fail as a config error, not an arithmetic panic.
    config_with("\"num_attention_heads\": 4", "\"num_attention_heads\": 4611686018427387904");
    forward_fails(&dir, &broken, &good_inputs, &[], "is too large");
    // A sequence whose attention mask no memory could hold (9 TB) is an error line, not an abort;
    // where the kernel refuses what it cannot back (the default overcommit heuristic).
    std::fs::write(broken.join("config.json"), &config).unwrap();
    if std::fs::read_to_string("/proc/sys/vm/overcommit_memory").is_ok_and(|m| m.trim() == "0") {
        let long = dir.join("long.safetensors");
        let ids = oxtorch_tensor::Tensor::zeros([1, 3_000_000], oxtorch_tensor::DType::I64).unwrap();
        write_safetensors(&long, &[("input_ids".to_string(), ids)], None).unwrap();
        forward_fails(&dir, &broken, &long, &[], "not enough memory: you tried to allocate");
    }
    // A model with no layer runs forward (as in transformers) but has no cache to generate with.
    config_with("\"num_hidden_layers\": 2", "\"num_hidden_layers\": 0");
    command_fails(
        "generate",
        &dir,
        &broken,
        &good_inputs,
        &["--max-new-tokens", "2", "--greedy"],
        "generation needs a model with at least one layer (num_hidden_layers is 0)",
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `generate --inputs --output --language` on Whisper writes transformers' `generate` output; the
/// Whisper flags on another model are an error.
#[test]
fn generate_ids_with_whisper() {
    let dir = scratch("generate_whisper");
    let golden = read_all(&fixture("whisper_gen").join("generate_de.safetensors"));
    let inputs = dir.join("features.safetensors");
    write_safetensors(&inputs, &[("input_features".to_string(), golden["input_features"].clone())], None)
        .unwrap();
    let output = dir.join("ids.safetensors");
    let model = fixture("whisper_gen");
    let args = |model: &Path, language: &str| {
        let out = hf_import(&[
            "generate",
            model.to_str().unwrap(),
            "--inputs",
            inputs.to_str().unwrap(),
            "--output",
            output.to_str().unwrap(),
            "--language",
            language,
        ]);
        (out.status.success(), stderr(&out))
    };
    let (ok, err) = args(&model, "de");
    assert!(ok, "{err}");
    assert_eq!(
        read_all(&output)["output_ids"].to_vec2::<i64>().unwrap(),
        golden["output_ids"].to_vec2::<i64>().unwrap()
    );
    let (ok, err) = args(&fixture("t5_v11"), "de");
    assert!(!ok && err.contains("--language and --task are Whisper's"), "{err}");
    // From WAV files: the features as the folder's preprocessor_config.json computes them.
    let golden = read_all(&fixture("whisper_gen").join("audio_fr.safetensors"));
    let clip = |i: usize| fixture("whisper_gen").join(format!("clip{i}.wav"));
    let out = hf_import(&[
        "generate",
        model.to_str().unwrap(),
        "--audio",
        clip(0).to_str().unwrap(),
        "--audio",
        clip(1).to_str().unwrap(),
        "--language",
        "fr",
        "--output",
        output.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        read_all(&output)["output_ids"].to_vec2::<i64>().unwrap(),
        golden["output_ids"].to_vec2::<i64>().unwrap()
    );
    // Audio at another rate than the extractor's is an error that says so.
    let wrong = fixture("whisper_audio").join("clip.wav");
    let out = hf_import(&["generate", model.to_str().unwrap(), "--audio", wrong.to_str().unwrap()]);
    assert!(!out.status.success() && stderr(&out).contains("sampled at 16000 Hz"), "{}", stderr(&out));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `generate --inputs --output` on an encoder-decoder writes transformers' `generate` output: the
/// decoder's tokens from its start token.
#[test]
fn generate_ids_with_an_encoder_decoder() {
    let dir = scratch("generate_seq2seq");
    let golden = read_all(&fixture("t5_v11").join("generate.safetensors"));
    let inputs = dir.join("sources.safetensors");
    let sources = vec![
        ("input_ids".to_string(), golden["input_ids"].clone()),
        ("attention_mask".to_string(), golden["attention_mask"].clone()),
    ];
    write_safetensors(&inputs, &sources, None).unwrap();
    let output = dir.join("ids.safetensors");
    let model = fixture("t5_v11");
    let out = hf_import(&[
        "generate",
        model.to_str().unwrap(),
        "--inputs",
        inputs.to_str().unwrap(),
        "--output",
        output.to_str().unwrap(),
        "--max-new-tokens",
        "8",
        "--greedy",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        read_all(&output)["output_ids"].to_vec2::<i64>().unwrap(),
        golden["output_ids"].to_vec2::<i64>().unwrap()
    );
    // An encoder alone cannot generate.
    let out = hf_import(&[
        "generate",
        fixture("t5_encoder").to_str().unwrap(),
        "--inputs",
        inputs.to_str().unwrap(),
        "--output",
        output.to_str().unwrap(),
    ]);
    assert!(
        !out.status.success() && stderr(&out).contains("generate needs a causal LM or an encoder-decoder"),
        "{}",
        stderr(&out)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `generate --prompt` on NLLB-200 with `--src-lang` and `--tgt-lang` prints transformers'
/// translation; the flags are refused with an unknown code and on a decoder-only model.
#[test]
fn generate_translates_between_nllb_languages() {
    let dir = fixture("nllb");
    let cases: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("translate.json")).unwrap()).unwrap();
    let case = &cases[0];
    let run = |model: &Path, src: &str, tgt: &str| {
        hf_import(&[
            "generate",
            model.to_str().unwrap(),
            "--prompt",
            case["prompt"].as_str().unwrap(),
            "--src-lang",
            src,
            "--tgt-lang",
            tgt,
            "--greedy",
            "--max-new-tokens",
            "8",
        ])
    };
    let out = run(&dir, case["src_lang"].as_str().unwrap(), case["tgt_lang"].as_str().unwrap());
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), format!("{}\n", case["text"].as_str().unwrap()));
    let out = run(&dir, "fra_Latn", "xx_Latn");
    assert!(!out.status.success());
    assert!(stderr(&out).contains("the target language \"xx_Latn\" is not a token"), "{}", stderr(&out));
    let out = run(&dir, "yy_Latn", "deu_Latn");
    assert!(stderr(&out).contains("the source language \"yy_Latn\" is not a token"), "{}", stderr(&out));
    let out = run(&fixture("llama"), "fra_Latn", "deu_Latn");
    assert!(stderr(&out).contains("translation settings of encoder-decoders"), "{}", stderr(&out));
}

/// `generate --prompt` on an OPUS-MT (Marian) folder without `tokenizer.json` (two SentencePiece
/// models and `vocab.json`) prints transformers' translation; `--tgt-lang deu` writes the
/// `>>deu<<` code before the prompt, and a code the vocabulary lacks is refused.
#[test]
fn generate_translates_with_an_opus_mt_folder() {
    let dir = fixture("opus_mt");
    let cases: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("translate.json")).unwrap()).unwrap();
    for case in cases.as_array().unwrap() {
        let mut args = vec!["generate", dir.to_str().unwrap(), "--prompt", case["prompt"].as_str().unwrap()];
        if let Some(code) = case["tgt_lang"].as_str() {
            args.extend(["--tgt-lang", code]);
        }
        args.extend(["--greedy", "--max-new-tokens", "8"]);
        let out = hf_import(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(String::from_utf8_lossy(&out.stdout), format!("{}\n", case["text"].as_str().unwrap()));
    }
    let out = hf_import(&["generate", dir.to_str().unwrap(), "--prompt", "Hello", "--tgt-lang", "xx"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("\"xx\" is not one of the tokenizer's >>lang<< codes"), "{}", stderr(&out));
}

/// `generate --prompt` on an M2M100 folder without `tokenizer.json` (a SentencePiece BPE and
/// fairseq's dictionary) with `--src-lang fr --tgt-lang de` (or the default source, English) prints
/// transformers' translation.
#[test]
fn generate_translates_with_an_m2m_100_folder() {
    let dir = fixture("m2m_100_spm");
    let cases: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("translate.json")).unwrap()).unwrap();
    for case in cases.as_array().unwrap() {
        let mut args = vec!["generate", dir.to_str().unwrap(), "--prompt", case["prompt"].as_str().unwrap()];
        if let Some(code) = case["src_lang"].as_str() {
            args.extend(["--src-lang", code]);
        }
        args.extend(["--tgt-lang", case["tgt_lang"].as_str().unwrap(), "--greedy", "--max-new-tokens", "8"]);
        let out = hf_import(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(String::from_utf8_lossy(&out.stdout), format!("{}\n", case["text"].as_str().unwrap()));
    }
}

/// `generate --prompt` on an OPT folder whose tokenizer is `vocab.json` and `merges.txt` alone
/// (as OPT's checkpoints ship it) prints the prompt and transformers' continuation.
#[test]
fn generate_continues_with_an_opt_vocab_and_merges_folder() {
    let dir = fixture("opt_bpe");
    let cases: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("prompts.json")).unwrap()).unwrap();
    for case in cases.as_array().unwrap() {
        let prompt = case["prompt"].as_str().unwrap();
        let out = hf_import(&[
            "generate",
            dir.to_str().unwrap(),
            "--prompt",
            prompt,
            "--greedy",
            "--max-new-tokens",
            "8",
            "--no-repeat-ngram-size",
            "1",
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!("{prompt}{}\n", case["text"].as_str().unwrap())
        );
    }
}

#[test]
fn generate_ids_and_text() {
    let dir = scratch("generate");
    // (Mamba generates from its recurrent state.)
    for name in ["llama", "gemma2", "phi3", "mamba", "falcon_mamba", "mamba2"] {
        let golden = read_all(&fixture(name).join("generate.safetensors"));
        let inputs = dir.join("prompts.safetensors");
        let prompts = vec![
            ("input_ids".to_string(), golden["input_ids"].clone()),
            ("attention_mask".to_string(), golden["attention_mask"].clone()),
        ];
        write_safetensors(&inputs, &prompts, None).unwrap();
        let output = dir.join("ids.safetensors");
        let out = hf_import(&[
            "generate",
            fixture(name).to_str().unwrap(),
            "--inputs",
            inputs.to_str().unwrap(),
            "--output",
            output.to_str().unwrap(),
            "--max-new-tokens",
            "10",
            "--greedy",
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        let ids = read_all(&output)["output_ids"].clone();
        assert_eq!(ids.dtype(), oxtorch_tensor::DType::I64);
        // The fixtures' goldens pad finished rows with 0; config.json's pad_token_id is what the CLI
        // uses, so compare the tokens up to each row's EOS.
        let (got, want) = (ids.to_vec2::<i64>().unwrap(), golden["output_ids"].to_vec2::<i64>().unwrap());
        for (g, w) in got.iter().zip(&want) {
            let end = w[7..].iter().position(|&t| t == 2).map_or(w.len(), |i| 7 + i + 1);
            assert_eq!(g[..end], w[..end], "{name}");
        }
    }
    let out = hf_import(&[
        "generate",
        fixture("llama_tied").to_str().unwrap(),
        "--prompt",
        "the cat sits on",
        "--max-new-tokens",
        "6",
        "--greedy",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("the cat sits on ") && text.split_whitespace().count() > 4, "{text}");
    // `--stop` ends the text once it holds the stop string: the same text, cut after the token that
    // completes the continuation's first word.
    let word = text["the cat sits on ".len()..].split_whitespace().next().unwrap().to_string();
    let out = hf_import(&[
        "generate",
        fixture("llama_tied").to_str().unwrap(),
        "--prompt",
        "the cat sits on",
        "--max-new-tokens",
        "6",
        "--greedy",
        "--stop",
        &word,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let stopped = String::from_utf8(out.stdout).unwrap();
    let stopped = stopped.trim_end();
    assert!(
        text.starts_with(stopped) && stopped["the cat sits on".len()..].contains(&word),
        "{stopped:?} vs {text:?}"
    );
    assert!(stopped.len() < text.trim_end().len(), "stopped early: {stopped:?} vs {text:?}");
    let out = hf_import(&[
        "generate",
        fixture("llama_tied").to_str().unwrap(),
        "--prompt",
        "what is the sun?",
        "--chat",
        "--max-new-tokens",
        "4",
        "--greedy",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let reply = String::from_utf8(out.stdout).unwrap();
    assert!(!reply.trim().is_empty() && !reply.contains("what is the sun"), "{reply}");
    // The same conversation from a --messages file gives the same reply; a file without roles is
    // the template's error, naming the file.
    let conversation = dir.join("conversation.json");
    let llama_tied = fixture("llama_tied");
    let from_file = |path: &std::path::Path| {
        let path = path.to_str().unwrap();
        hf_import(&[
            "generate",
            llama_tied.to_str().unwrap(),
            "--messages",
            path,
            "--max-new-tokens",
            "4",
            "--greedy",
        ])
    };
    std::fs::write(&conversation, r#"[{"role": "user", "content": "what is the sun?"}]"#).unwrap();
    let out = from_file(&conversation);
    assert_eq!(String::from_utf8_lossy(&out.stdout), reply, "{}", stderr(&out));
    std::fs::write(&conversation, r#"[{"content": "hi"}]"#).unwrap();
    let out = from_file(&conversation);
    assert!(
        stderr(&out).contains("conversation.json") && stderr(&out).contains("no \"role\""),
        "{}",
        stderr(&out)
    );
    let out = hf_import(&["generate", fixture("llama").to_str().unwrap(), "--prompt", "hi", "--chat"]);
    assert!(
        stderr(&out).contains("no tokenizer.json") || stderr(&out).contains("no chat template"),
        "{}",
        stderr(&out)
    );
    let out = hf_import(&["generate", fixture("bert").to_str().unwrap(), "--prompt", "hi"]);
    assert!(
        stderr(&out).contains("generate needs a causal LM or an encoder-decoder, not BertModel"),
        "{}",
        stderr(&out)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// LLaVA, VipLLaVA, Gemma 3, PaliGemma 2 and LLaVA-OneVision with images through the CLI:
/// `forward` on `pixel_values` and the prompts' ids writes transformers' outputs (`image_outputs.*`
/// included), and `generate --inputs` with `pixel_values` (and the `token_type_ids` of Gemma 3's
/// images or PaliGemma's prefix, OneVision's `image_sizes` and `batch_num_images`, Idefics3's
/// `pixel_attention_mask`, Qwen2-VL's `image_grid_thw` and `mm_token_type_ids`, Qwen's videos,
/// Llama 3.2 Vision's tile layouts and `cross_attention_mask`, Qwen2-Audio's and Voxtral's
/// `input_features`) writes transformers' greedy ids.
#[test]
fn llava_forward_and_generate_with_images() {
    let dir = scratch("llava-images");
    let names =
        ["llava_images", "vipllava_images", "gemma3_images", "paligemma2_images", "llava_onevision_images"];
    for name in names.into_iter().chain([
        "idefics3_images",
        "llava_pixtral_images",
        "qwen2_vl_images",
        "qwen3_vl_moe_images",
        "qwen2_5_vl_video",
        "qwen3_vl_video",
        "lfm2_vl_images",
        "mllama_images",
        "qwen2_audio_audio",
        "voxtral_audio",
        "llava_onevision_video",
    ]) {
        forward_matches(&fixture(name), name, &dir);
        let golden = read_all(&fixture(name).join("generate.safetensors"));
        let inputs = dir.join("prompts.safetensors");
        let names = [
            "input_ids",
            "attention_mask",
            "pixel_values",
            "token_type_ids",
            "image_sizes",
            "batch_num_images",
            "pixel_attention_mask",
            "image_grid_thw",
            "mm_token_type_ids",
            "pixel_values_videos",
            "video_grid_thw",
            "second_per_grid_ts",
            "spatial_shapes",
            "aspect_ratio_ids",
            "aspect_ratio_mask",
            "cross_attention_mask",
            "input_features",
            "feature_attention_mask",
        ];
        let given = names.iter().filter(|n| golden.contains_key(**n));
        let prompts: Vec<_> = given.map(|n| (n.to_string(), golden[*n].clone())).collect();
        write_safetensors(&inputs, &prompts, None).unwrap();
        let output = dir.join("ids.safetensors");
        let out = hf_import(&[
            "generate",
            fixture(name).to_str().unwrap(),
            "--inputs",
            inputs.to_str().unwrap(),
            "--output",
            output.to_str().unwrap(),
            "--max-new-tokens",
            "10",
            "--greedy",
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        let want = golden["output_ids"].to_vec2::<i64>().unwrap();
        assert_eq!(read_all(&output)["output_ids"].to_vec2::<i64>().unwrap(), want, "{name}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Qwen2-VL's `generate --inputs` without an `attention_mask`: the mask generation infers from
/// the left padding also leaves the padding out of the image positions (transformers' ids).
#[test]
fn qwen_generate_infers_the_mask_of_the_image_positions() {
    let dir = scratch("qwen-inferred-mask");
    let golden = read_all(&fixture("qwen2_vl_images").join("generate.safetensors"));
    let given = golden.iter().filter(|(k, _)| !["attention_mask", "output_ids"].contains(&k.as_str()));
    let prompts: Vec<_> = given.map(|(k, v)| (k.clone(), v.clone())).collect();
    let (inputs, output) = (dir.join("prompts.safetensors"), dir.join("ids.safetensors"));
    write_safetensors(&inputs, &prompts, None).unwrap();
    let fixture_dir = fixture("qwen2_vl_images");
    let out = hf_import(&[
        "generate",
        fixture_dir.to_str().unwrap(),
        "--inputs",
        inputs.to_str().unwrap(),
        "--output",
        output.to_str().unwrap(),
        "--max-new-tokens",
        "10",
        "--greedy",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let want = golden["output_ids"].to_vec2::<i64>().unwrap();
    assert_eq!(read_all(&output)["output_ids"].to_vec2::<i64>().unwrap(), want);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Gemma 3 multimodal checkpoints (`model_type` `gemma3`), both tensor layouts: `forward` on text
/// matches transformers, `generate` its greedy ids, `inspect` names the architecture and lists the
/// whole checkpoint, and image inputs are one error line.
#[test]
fn gemma3_multimodal_forward_generate_inspect() {
    let dir = scratch("gemma3-mm");
    for name in ["gemma3_mm", "gemma3_mm_untied"] {
        forward_matches(&fixture(name), name, &dir);
        let golden = read_all(&fixture(name).join("generate.safetensors"));
        let inputs = dir.join("prompts.safetensors");
        let prompts = vec![
            ("input_ids".to_string(), golden["input_ids"].clone()),
            ("attention_mask".to_string(), golden["attention_mask"].clone()),
        ];
        write_safetensors(&inputs, &prompts, None).unwrap();
        let output = dir.join("ids.safetensors");
        let out = hf_import(&[
            "generate",
            fixture(name).to_str().unwrap(),
            "--inputs",
            inputs.to_str().unwrap(),
            "--output",
            output.to_str().unwrap(),
            "--max-new-tokens",
            "10",
            "--greedy",
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        // (No row of the goldens reaches Gemma's EOS, 1: every token is compared.)
        let want = golden["output_ids"].to_vec2::<i64>().unwrap();
        assert!(want.iter().all(|row| !row[7..].contains(&1)), "{want:?}");
        assert_eq!(read_all(&output)["output_ids"].to_vec2::<i64>().unwrap(), want, "{name}");
    }
    let out = hf_import(&["inspect", fixture("gemma3_mm").to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("model_type:   gemma3\n"), "{text}");
    assert!(text.contains("architecture: Gemma3ForConditionalGeneration\n"), "{text}");
    assert!(text.contains("and on images with its vision tower and projector"), "{text}");
    assert!(text.contains("language_model.model.layers.1.self_attn.q_norm.weight"), "{text}");
    assert!(text.contains("vision_tower.encoder.layers.0.mlp.fc1.weight"), "{text}");
    let out = hf_import(&["inspect", fixture("gemma3n_mm").to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("architecture: Gemma3nForConditionalGeneration\n"), "{text}");
    assert!(text.contains("the vision and audio towers are not loaded"), "{text}");
    assert!(text.contains("model.audio_tower.subsample_conv_projection.input_proj_linear.weight"), "{text}");
    let pixels = dir.join("pixels.safetensors");
    let ids = oxtorch_tensor::Tensor::from_vec(vec![1i64, 17, 42], [1, 3]).unwrap();
    let image = oxtorch_tensor::Tensor::zeros([1, 3, 4, 4], oxtorch_tensor::DType::F32).unwrap();
    write_safetensors(&pixels, &[("input_ids".to_string(), ids), ("pixel_values".to_string(), image)], None)
        .unwrap();
    forward_fails(
        &dir,
        &fixture("gemma3_mm"),
        &pixels,
        &[],
        "Image features and image tokens do not match, tokens: 0, features: 4",
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `inspect M | true`: a reader that has closed the pipe before anything is written ends the
/// command quietly (status 0, nothing on stderr), not with a panic.
#[test]
fn a_closed_stdout_is_not_a_panic() {
    use std::process::Stdio;
    let model = fixture("llama");
    // A pipe whose read end is closed before the command starts: its first write fails.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = Command::new(env!("CARGO_BIN_EXE_hf-import"))
        .args(["inspect", model.to_str().unwrap()])
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .output()
        .expect("the hf-import binary runs");
    assert!(out.status.success(), "status {:?}: {}", out.status, stderr(&out));
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
}
