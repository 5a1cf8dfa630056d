"""Dev-time script: tiny random-weight encoder-decoder models (T5, mT5, BART, mBART, Whisper) and transformers'
outputs.

Run with the reference environment (torch + transformers 5, no network):

    /work/.refenv/bin/python hf-import/tests/make_seq2seq_fixtures.py [NAME...]

As `make_fixtures.py` does for the other families (whose helpers it uses): each model is built from a
config object (eager attention), every parameter randomised, saved with `save_pretrained` under
`hf-import/tests/fixtures/<name>/`, and run with `output_hidden_states=True`; `expected.safetensors`
holds the inputs (`input_ids`, `attention_mask`, `decoder_input_ids`, `decoder_attention_mask`) and
the outputs under transformers' field names (`logits`, `encoder_last_hidden_state`,
`decoder_hidden_states.0`, ...), all float32. `generate.safetensors` holds a greedy `generate` of
the generation models.
"""

import json
import shutil

import torch
import transformers as tf
from safetensors.torch import load_file, save_file

from make_fixtures import ONLY, OUT, flatten, randomise

# Small buckets and distances, so that 7-token inputs reach the log-spaced buckets.
T5 = dict(vocab_size=100, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4,
          relative_attention_num_buckets=8, relative_attention_max_distance=10, decoder_start_token_id=0,
          attn_implementation="eager")


def inputs(decoder=True):
    """Two sources of 7 tokens (the second right-padded to 5) and two targets of 5 tokens starting with
    the decoder start id 0 (the second padded to 3)."""
    x = {"input_ids": torch.tensor([[13, 17, 42, 5, 99, 23, 1], [3, 64, 12, 77, 1, 0, 0]]),
         "attention_mask": torch.tensor([[1] * 7, [1] * 5 + [0] * 2])}
    if decoder:
        x["decoder_input_ids"] = torch.tensor([[0, 8, 31, 52, 9], [0, 44, 6, 0, 0]])
        x["decoder_attention_mask"] = torch.tensor([[1] * 5, [1] * 3 + [0] * 2])
    return x


def bart_inputs(decoder=True):
    """BART's layout: sources `<s> ... </s>` (id 0 ... 2), the second right-padded with pad id 1;
    targets from the decoder start token 2."""
    x = {"input_ids": torch.tensor([[0, 17, 42, 5, 99, 23, 2], [0, 64, 12, 77, 2, 1, 1]]),
         "attention_mask": torch.tensor([[1] * 7, [1] * 5 + [0] * 2])}
    if decoder:
        x["decoder_input_ids"] = torch.tensor([[2, 0, 31, 52, 9], [2, 0, 6, 1, 1]])
        x["decoder_attention_mask"] = torch.tensor([[1] * 5, [1] * 3 + [0] * 2])
    return x


def build(name, model_cls, config, seed, untied_head=False, decoder=True, make_inputs=inputs, logits_bias=False,
          keep_generation_config=False, generation=None, reload=False):
    """Saves the randomised model `name` and its outputs; with `untied_head`, the checkpoint also holds
    its own `lm_head.weight` (as T5 v1.1, Flan-T5 and mT5 do), and the goldens come from the model
    transformers reloads from it."""
    if ONLY and name not in ONLY:
        return None
    torch.manual_seed(seed)
    model = model_cls(config).eval()
    randomise(model, seed)
    if logits_bias:  # a buffer, which randomise() leaves at zero
        g = torch.Generator().manual_seed(seed + 2000)
        model.final_logits_bias.copy_(0.5 * torch.randn(model.final_logits_bias.shape, generator=g))
    path = OUT / name
    shutil.rmtree(path, ignore_errors=True)
    if generation:  # settings generate reads from generation_config.json
        for key, value in generation.items():
            setattr(model.generation_config, key, value)
    model.save_pretrained(path)
    if untied_head:
        tensors = load_file(str(path / "model.safetensors"))
        g = torch.Generator().manual_seed(seed + 1000)
        tensors["lm_head.weight"] = 0.2 * torch.randn(config.vocab_size, config.d_model, generator=g)
        save_file(tensors, str(path / "model.safetensors"), metadata={"format": "pt"})
        model = model_cls.from_pretrained(path, attn_implementation="eager").eval()
        same = torch.equal(model.lm_head.weight, tensors["lm_head.weight"])
        print(f"{name}: transformers reads the file's lm_head: {same}")
    if reload:  # what a user gets (Marian's positions are not saved: they are rebuilt on load)
        model = model_cls.from_pretrained(path, attn_implementation="eager").eval()
    x = make_inputs(decoder)
    with torch.no_grad():
        out = model(**x, output_hidden_states=True, **({"use_cache": False} if decoder else {}))
    flat = flatten(out)
    save_file({**x, **flat}, str(path / "expected.safetensors"))
    if hasattr(model, "generate") and "lm_head" in dict(model.named_modules()) and "input_ids" in x:
        g = {"input_ids": x["input_ids"], "attention_mask": x["attention_mask"]}
        with torch.no_grad():
            ids = model.generate(**g, max_new_tokens=8, do_sample=False)
        save_file({**g, "output_ids": ids.contiguous()}, str(path / "generate.safetensors"))
    if not keep_generation_config:
        (path / "generation_config.json").unlink(missing_ok=True)
    print(f"{name}: {sorted(flat)[:5]}... {sum(f.stat().st_size for f in path.iterdir())} bytes")
    return model


def t5():
    build("t5", tf.T5ForConditionalGeneration, tf.T5Config(**T5), 70)
    # T5 v1.1 / Flan-T5: gated GELU, its own LM head, no output scaling; heads narrower than d_model.
    v11 = dict(T5, feed_forward_proj="gated-gelu", tie_word_embeddings=False, d_kv=6)
    build("t5_v11", tf.T5ForConditionalGeneration, tf.T5Config(**v11), 71, untied_head=True)
    build("t5_encoder", tf.T5EncoderModel, tf.T5Config(**T5, feed_forward_proj="gated-silu"), 72, decoder=False)
    # (A decoder deeper than the encoder: transformers 5.24 cannot generate with one, its cache sized by
    # num_layers, so only the base model has it.)
    build("mt5", tf.MT5Model, tf.MT5Config(**T5, num_decoder_layers=3), 73)
    # The sequence classifier: the decoder on the sources shifted right, read at each row's last EOS (id 1).
    build("t5_cls", tf.T5ForSequenceClassification, tf.T5Config(**T5, num_labels=3), 74, decoder=False)
    # The token classifier: a T5EncoderModel under `transformer.`, `classifier` on every state.
    build("t5_tok", tf.T5ForTokenClassification, tf.T5Config(**T5, num_labels=5, feed_forward_proj="gated-gelu"), 75,
          decoder=False)
    # Extractive QA: the decoder on the sources shifted right, start and end logits on its states.
    build("t5_qa", tf.T5ForQuestionAnswering, tf.T5Config(**T5), 76, decoder=False)
    # UMT5: each block's own relative-position bias table; its own LM head (no output scaling), and an
    # encoder alone with ReLU.
    umt5 = dict(T5, tie_word_embeddings=False, d_kv=6)
    build("umt5", tf.UMT5ForConditionalGeneration, tf.UMT5Config(**umt5), 77, untied_head=True)
    build("umt5_encoder", tf.UMT5EncoderModel, tf.UMT5Config(**dict(T5, feed_forward_proj="relu", num_layers=3)), 78,
          decoder=False)


BART = dict(vocab_size=100, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
            decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=48, max_position_embeddings=32,
            attn_implementation="eager")


def bart():
    # The generation model with its final_logits_bias; the base model reading input_ids shifted as its
    # decoder input (no decoder_input_ids), scaled embeddings, ReLU; mBART's pre-norm blocks, its
    # shift (each row's last token first) and a forced first token in generation.
    build("bart", tf.BartForConditionalGeneration, tf.BartConfig(**BART), 80, make_inputs=bart_inputs,
          logits_bias=True, keep_generation_config=True, generation={"no_repeat_ngram_size": 2})
    build("bart_base", tf.BartModel, tf.BartConfig(**BART, scale_embedding=True, activation_function="relu"), 81,
          make_inputs=lambda decoder: bart_inputs(False))
    # Zero-shot NLI classifiers (bart-large-mnli): the decoder's state at each row's last eos.
    build("bart_cls", tf.BartForSequenceClassification,
          tf.BartConfig(**BART, id2label={0: "contradiction", 1: "neutral", 2: "entailment"},
                        label2id={"contradiction": 0, "neutral": 1, "entailment": 2}), 83,
          make_inputs=lambda decoder: bart_inputs(False))
    build("mbart", tf.MBartForConditionalGeneration,
          tf.MBartConfig(**BART, scale_embedding=True, decoder_start_token_id=2), 82,
          make_inputs=lambda decoder: bart_inputs(False), keep_generation_config=True,
          generation={"forced_bos_token_id": 7, "repetition_penalty": 1.5})


def marian_pegasus():
    # OPUS-MT's layout: post-norm, sinusoidal positions (not saved), swish, scaled embeddings, heads of
    # 9 and 12; one with its own decoder vocabulary. Pegasus: pre-norm.
    marian = dict(BART, d_model=36, encoder_attention_heads=4, decoder_attention_heads=3, scale_embedding=True,
                  activation_function="swish", pad_token_id=99, decoder_start_token_id=99, eos_token_id=0,
                  forced_eos_token_id=0)
    build("marian", tf.MarianMTModel, tf.MarianConfig(**marian), 84, make_inputs=marian_inputs,
          keep_generation_config=True, logits_bias=True, reload=True)
    split = dict(marian, d_model=32, decoder_attention_heads=4, pad_token_id=60, decoder_start_token_id=60)
    build("marian_split", tf.MarianMTModel,
          tf.MarianConfig(**split, share_encoder_decoder_embeddings=False, decoder_vocab_size=70),
          85, make_inputs=lambda decoder: marian_inputs(decoder, pad=60), keep_generation_config=True, reload=True)
    build("pegasus", tf.PegasusForConditionalGeneration,
          tf.PegasusConfig(**BART, scale_embedding=True, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0),
          86, make_inputs=inputs, keep_generation_config=True, logits_bias=True)


def m2m_100():
    # M2M100 / NLLB-200: pre-norm, fairseq's sinusoidal positions (not saved) counted from the non-padding
    # tokens, scaled embeddings, ReLU; generation forced to a target-language token, as NLLB is run. The
    # base model: an odd width (the sinusoids' zero column), sources padded on the left and within.
    build("m2m_100", tf.M2M100ForConditionalGeneration, tf.M2M100Config(**BART), 87, make_inputs=bart_inputs,
          keep_generation_config=True, generation={"forced_bos_token_id": 7}, reload=True)
    odd = dict(BART, d_model=33, encoder_attention_heads=3, decoder_attention_heads=3, activation_function="gelu")
    build("m2m_100_base", tf.M2M100Model, tf.M2M100Config(**odd, scale_embedding=False), 88,
          make_inputs=m2m_inputs, reload=True)


def nllb():
    # NLLB-200 end to end: M2M100 with the NLLB-style tokenizer of `make_nllb_tokenizer_golden.py`; a prompt
    # framed with its source language, translated into a target language forced as the first new token.
    build("nllb", tf.M2M100ForConditionalGeneration, tf.M2M100Config(**dict(BART, vocab_size=225)), 89,
          make_inputs=bart_inputs)
    if ONLY and "nllb" not in ONLY:
        return
    path, fixtures = OUT / "nllb", OUT
    shutil.copy(fixtures / "tokenizers" / "nllb_bpe.json", path / "tokenizer.json")
    config = json.loads((fixtures / "nllb_tokenizer_expected.json").read_text())["configs"]["nllb"]
    (path / "tokenizer_config.json").write_text(json.dumps(config, indent=2) + "\n")
    tok = tf.AutoTokenizer.from_pretrained(path)
    model = tf.M2M100ForConditionalGeneration.from_pretrained(path, attn_implementation="eager").eval()
    cases = []
    for prompt, src, tgt in [("Hello world, how are you?", "fra_Latn", "deu_Latn"),
                             ("Café owners in Zürich", None, "zho_Hans")]:
        if src:
            tok.src_lang = src
        else:
            tok.src_lang = "eng_Latn"
        enc = tok(prompt, return_tensors="pt")
        with torch.no_grad():
            ids = model.generate(**enc, forced_bos_token_id=tok.convert_tokens_to_ids(tgt), max_new_tokens=8,
                                 do_sample=False)
        cases.append({"prompt": prompt, "src_lang": src, "tgt_lang": tgt, "input_ids": enc["input_ids"][0].tolist(),
                      "output_ids": ids[0].tolist(), "text": tok.decode(ids[0], skip_special_tokens=True)})
        print("nllb", cases[-1])
    (path / "translate.json").write_text(json.dumps(cases, ensure_ascii=False, indent=1) + "\n")


def m2m_100_spm():
    # M2M100 end to end: the tokenizer folder of `make_m2m100_tokenizer_golden.py` (a SentencePiece BPE, fairseq's
    # dictionary, the language tokens after it); a prompt framed with its source language, translated into a target
    # language forced as the first new token.
    vocab = json.loads((OUT / "tokenizers" / "m2m100" / "vocab.json").read_text())
    config = tf.M2M100Config(**dict(BART, vocab_size=len(vocab) + 100 + 8, pad_token_id=1, bos_token_id=0,
                                    eos_token_id=2, decoder_start_token_id=2))
    build("m2m_100_spm", tf.M2M100ForConditionalGeneration, config, 95, make_inputs=bart_inputs, reload=True,
          keep_generation_config=True, generation={"no_repeat_ngram_size": 1})
    if ONLY and "m2m_100_spm" not in ONLY:
        return
    path = OUT / "m2m_100_spm"
    for file in ["sentencepiece.bpe.model", "vocab.json"]:
        shutil.copy(OUT / "tokenizers" / "m2m100" / file, path / file)
    tok_config = json.loads((OUT / "m2m100_tokenizer_expected.json").read_text())["configs"]["m2m100_hub"]
    (path / "tokenizer_config.json").write_text(json.dumps(tok_config, indent=2) + "\n")
    (path / "special_tokens_map.json").write_text(json.dumps(
        json.loads((OUT / "m2m100_tokenizer_expected.json").read_text())["special_tokens_maps"]["m2m100_hub"]) + "\n")
    tok = tf.AutoTokenizer.from_pretrained(path)
    model = tf.M2M100ForConditionalGeneration.from_pretrained(path, attn_implementation="eager").eval()
    cases = []
    for prompt, src, tgt in [("Hello world, how are you?", "fr", "de"), ("Café owners in Zürich", None, "zh")]:
        tok.src_lang = src or "en"
        enc = tok(prompt, return_tensors="pt")
        with torch.no_grad():
            ids = model.generate(**enc, forced_bos_token_id=tok.get_lang_id(tgt), max_new_tokens=8, do_sample=False)
        cases.append({"prompt": prompt, "src_lang": src, "tgt_lang": tgt, "input_ids": enc["input_ids"][0].tolist(),
                      "output_ids": ids[0].tolist(), "text": tok.decode(ids[0], skip_special_tokens=True)})
        print("m2m_100_spm", cases[-1])
    (path / "translate.json").write_text(json.dumps(cases, ensure_ascii=False, indent=1) + "\n")


def opus_mt():
    # OPUS-MT end to end: Marian with the tokenizer folder of `make_marian_tokenizer_golden.py` (two SentencePiece
    # models, one vocabulary); prompts translated, one into a target language named by its `>>lang<<` code.
    vocab = json.loads((OUT / "tokenizers" / "marian" / "vocab.json").read_text())
    marian = dict(BART, vocab_size=len(vocab), d_model=36, encoder_attention_heads=4, decoder_attention_heads=3,
                  scale_embedding=True, activation_function="swish", pad_token_id=vocab["<pad>"],
                  decoder_start_token_id=vocab["<pad>"], eos_token_id=0, forced_eos_token_id=0)
    build("opus_mt", tf.MarianMTModel, tf.MarianConfig(**marian), 94,
          make_inputs=lambda decoder: marian_inputs(decoder, pad=vocab["<pad>"]), keep_generation_config=True,
          generation={"no_repeat_ngram_size": 1},
          reload=True)
    if ONLY and "opus_mt" not in ONLY:
        return
    path = OUT / "opus_mt"
    for file in ["source.spm", "target.spm", "vocab.json"]:
        shutil.copy(OUT / "tokenizers" / "marian" / file, path / file)
    (path / "tokenizer_config.json").write_text(json.dumps({"source_lang": "en", "target_lang": "de"}) + "\n")
    tok = tf.AutoTokenizer.from_pretrained(path)
    model = tf.MarianMTModel.from_pretrained(path, attn_implementation="eager").eval()
    cases = []
    for prompt, tgt in [("Hello world, how are you?", None), ("Café owners in Zürich", "deu")]:
        text = f">>{tgt}<< {prompt}" if tgt else prompt
        enc = tok(text, return_tensors="pt")
        with torch.no_grad():
            ids = model.generate(**enc, max_new_tokens=8, do_sample=False)
        cases.append({"prompt": prompt, "tgt_lang": tgt, "input_ids": enc["input_ids"][0].tolist(),
                      "output_ids": ids[0].tolist(), "text": tok.decode(ids[0], skip_special_tokens=True)})
        print("opus_mt", cases[-1])
    (path / "translate.json").write_text(json.dumps(cases, ensure_ascii=False, indent=1) + "\n")


def plbart_blenderbot():
    # PLBart: BART's post-norm layout with scaled embeddings, mBART's shift of input_ids as the decoder's default
    # input, its classifier at the last eos. Blenderbot: pre-norm with final norms, learned positions from row 0.
    # BlenderbotSmall: post-norm, its decoder's embedding norm before the positions are added.
    build("plbart", tf.PLBartForConditionalGeneration, tf.PLBartConfig(**BART, decoder_start_token_id=2), 90,
          make_inputs=lambda decoder: bart_inputs(False), logits_bias=True)
    build("plbart_cls", tf.PLBartForSequenceClassification, tf.PLBartConfig(**BART, num_labels=3), 91,
          make_inputs=lambda decoder: bart_inputs(False))
    blender = dict(BART, pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1,
                   forced_eos_token_id=None)
    build("blenderbot", tf.BlenderbotForConditionalGeneration, tf.BlenderbotConfig(**blender, scale_embedding=True),
          92, make_inputs=blender_inputs, logits_bias=True)
    build("blenderbot_small", tf.BlenderbotSmallForConditionalGeneration,
          tf.BlenderbotSmallConfig(**blender, activation_function="relu", scale_embedding=True), 93,
          make_inputs=blender_inputs)
    if ONLY and "blenderbot" not in ONLY:
        return
    # `encoder_no_repeat_ngram_size` (Blenderbot's generation default 3): sources whose n-grams the model would
    # repeat; greedy with sizes 1 and 2, beams with 2. `encoder_ngram.safetensors`: the sources, then
    # `output_ids.<case>`, each case's settings in the metadata.
    model = tf.BlenderbotForConditionalGeneration.from_pretrained(OUT / "blenderbot", attn_implementation="eager")
    x = {"input_ids": torch.tensor([[5, 1, 1, 42, 1, 1, 9, 2], [7, 46, 46, 9, 46, 46, 13, 2]]),
         "attention_mask": torch.ones(2, 8, dtype=torch.int64)}
    cases = {"greedy_1": dict(encoder_no_repeat_ngram_size=1), "greedy_2": dict(encoder_no_repeat_ngram_size=2),
             "beams_2": dict(encoder_no_repeat_ngram_size=2, num_beams=3)}
    out = dict(x)
    for name, settings in cases.items():
        with torch.no_grad():
            out[f"output_ids.{name}"] = model.eval().generate(**x, max_new_tokens=8, do_sample=False, **settings)
        print("blenderbot", name, out[f"output_ids.{name}"].tolist())
    save_file({k: v.contiguous() for k, v in out.items()}, str(OUT / "blenderbot" / "encoder_ngram.safetensors"),
              metadata={k: json.dumps(v) for k, v in cases.items()})


def blender_inputs(decoder=True):
    """Sources ending in eos 2, the second right-padded with pad id 0; targets from the start token 1."""
    x = {"input_ids": torch.tensor([[5, 17, 42, 33, 99, 23, 2], [7, 64, 12, 77, 2, 0, 0]]),
         "attention_mask": torch.tensor([[1] * 7, [1] * 5 + [0] * 2])}
    if decoder:
        x["decoder_input_ids"] = torch.tensor([[1, 8, 31, 52, 9], [1, 44, 6, 0, 0]])
        x["decoder_attention_mask"] = torch.tensor([[1] * 5, [1] * 3 + [0] * 2])
    return x


def m2m_inputs(decoder=True):
    """Sources `<s> ... </s>`, the second padded (id 1) on the left and inside; targets from the decoder
    start 2, the second padded inside and on the right."""
    x = {"input_ids": torch.tensor([[0, 17, 42, 5, 99, 23, 2], [1, 1, 0, 64, 1, 77, 2]]),
         "attention_mask": torch.tensor([[1] * 7, [0, 0, 1, 1, 1, 1, 1]])}
    if decoder:
        x["decoder_input_ids"] = torch.tensor([[2, 7, 31, 52, 9], [2, 7, 1, 6, 1]])
        x["decoder_attention_mask"] = torch.tensor([[1] * 5, [1, 1, 1, 1, 0]])
    return x


def marian_inputs(decoder=True, pad=99):
    """Sources ending in eos 0, the second right-padded with the pad id; targets from the start token
    (the pad id)."""
    x = {"input_ids": torch.tensor([[13, 17, 42, 5, 66, 23, 0], [3, 64, 12, 77, 0, pad, pad]]),
         "attention_mask": torch.tensor([[1] * 7, [1] * 5 + [0] * 2])}
    if decoder:
        x["decoder_input_ids"] = torch.tensor([[pad, 8, 31, 52, 9], [pad, 44, 6, pad, pad]])
        x["decoder_attention_mask"] = torch.tensor([[1] * 5, [1] * 3 + [0] * 2])
    return x


WHISPER = dict(vocab_size=100, num_mel_bins=8, d_model=32, encoder_layers=2, decoder_layers=2,
               encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=48,
               max_source_positions=6, max_target_positions=16, decoder_start_token_id=1, pad_token_id=0,
               bos_token_id=1, eos_token_id=2, begin_suppress_tokens=None, attn_implementation="eager")


def whisper_inputs(decoder=True):
    """Log-mel-like features of two 12-frame clips (2 x max_source_positions) over 8 bins, and
    targets from the start token 1, the second padded."""
    g = torch.Generator().manual_seed(90)
    return {"input_features": torch.randn((2, 8, 12), generator=g),
            "decoder_input_ids": torch.tensor([[1, 50, 31, 52, 9], [1, 44, 6, 0, 0]]),
            "decoder_attention_mask": torch.tensor([[1] * 5, [1] * 3 + [0] * 2])}


def whisper():
    build("whisper", tf.WhisperForConditionalGeneration, tf.WhisperConfig(**WHISPER), 90,
          make_inputs=whisper_inputs)
    build("whisper_base", tf.WhisperModel, tf.WhisperConfig(**WHISPER, activation_function="relu"), 91,
          make_inputs=whisper_inputs)


# Whisper generation goldens: the `whisper` fixture's weights with the generation settings of a
# multilingual checkpoint (`whisper_gen`: language tokens, tasks, `<|notimestamps|>`, the older
# `forced_decoder_ids` with the language left to detection, suppressed tokens, pad = EOS, `max_length`)
# and of an English-only one (`whisper_en`: no languages, a pad token of its own), each case in
# `generate_<case>.safetensors` (its `generate` arguments in the metadata). The EOS is a token the
# model produces (found by a first run), so that rows end early and their EOS and padding are
# stripped as transformers does.
WHISPER_GEN = {
    "whisper_gen": (dict(decoder_start_token_id=1, lang_to_id={"<|en|>": 90, "<|fr|>": 91, "<|de|>": 92},
                         task_to_id={"translate": 93, "transcribe": 94}, is_multilingual=True,
                         no_timestamps_token_id=99, forced_decoder_ids=[[1, None], [2, 94]],
                         suppress_tokens=[5, 6], begin_suppress_tokens=[7], max_length=10, eos_token_id=97,
                         pad_token_id=97),
                    {"detect": {}, "french_translate": dict(language="french", task="translate"),
                     "de": dict(language="de"), "max_new": dict(language="<|en|>", max_new_tokens=6),
                     "beams": dict(language="de", num_beams=3), "beams_detect": dict(num_beams=2, max_new_tokens=7)}),
    "whisper_en": (dict(decoder_start_token_id=1, is_multilingual=False, no_timestamps_token_id=99,
                        suppress_tokens=[3], max_length=12, eos_token_id=88, pad_token_id=0),
                   {"plain": {}, "max_new": dict(max_new_tokens=4)}),
}


def whisper_generation():
    x = {"input_features": whisper_inputs()["input_features"]}
    for name, (settings, cases) in WHISPER_GEN.items():
        if ONLY and name not in ONLY:
            continue
        path = OUT / name
        shutil.rmtree(path, ignore_errors=True)
        shutil.copytree(OUT / "whisper", path, ignore=shutil.ignore_patterns("*.safetensors", "generation_config.json"))
        shutil.copy(OUT / "whisper" / "model.safetensors", path / "model.safetensors")

        (path / "generation_config.json").write_text(json.dumps(dict(settings, bos_token_id=1), indent=2))
        model = tf.WhisperForConditionalGeneration.from_pretrained(path, attn_implementation="eager").eval()
        eos = settings["eos_token_id"]
        with torch.no_grad():
            for case, kwargs in cases.items():
                ids = model.generate(**x, **kwargs)
                meta = {k: json.dumps(v) for k, v in kwargs.items()}
                save_file({**x, "output_ids": ids.contiguous()}, str(path / f"generate_{case}.safetensors"),
                          metadata=meta)
                print(f"{name} {case} {kwargs} eos={eos}: {ids.tolist()}")


def write_wav(path, samples, rate):
    """16-bit PCM mono WAV of float samples in [-1, 1]; returns the samples as read back (x / 32768)."""
    import wave
    pcm = (samples.clamp(-1, 32767 / 32768) * 32768).round().to(torch.int16)
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm.numpy().tobytes())
    return pcm.float() / 32768


def whisper_audio():
    """`whisper_audio/`: a WAV clip, transformers' `WhisperFeatureExtractor` features of it (80 mel bins, one-second
    chunks: the clip padded with silence) and its 80-bin mel filter bank; and `whisper_gen/` a preprocessor config
    for the tiny model (8 bins, 12 frames a chunk), a clip for it and `generate`'s output on its features."""
    if ONLY and not ONLY & {"whisper_audio", "whisper_gen"}:  # (rebuilding whisper_gen removes its audio files)
        return
    g = torch.Generator().manual_seed(7)
    path = OUT / "whisper_audio"
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir()
    t = torch.arange(12800) / 16000
    clip = 0.3 * torch.sin(2 * torch.pi * 440 * t) + 0.2 * torch.sin(2 * torch.pi * 1250 * t) + 0.05 * torch.randn(
        12800, generator=g)
    clip = write_wav(path / "clip.wav", clip, 16000)
    fe = tf.WhisperFeatureExtractor(feature_size=80, chunk_length=1)
    feats = fe(clip.numpy(), sampling_rate=16000, return_tensors="pt")["input_features"]
    save_file({"input_features": feats.contiguous(), "mel_filters": torch.from_numpy(fe.mel_filters).contiguous()},
              str(path / "features.safetensors"))
    print("whisper_audio features", feats.shape)
    # The tiny model: 12 frames of 8 bins per chunk.
    gen = OUT / "whisper_gen"
    pre = dict(feature_extractor_type="WhisperFeatureExtractor", feature_size=8, sampling_rate=19200, hop_length=1600,
               chunk_length=1, n_fft=400, padding_value=0.0, return_attention_mask=False)
    (gen / "preprocessor_config.json").write_text(json.dumps(pre, indent=2))
    fe = tf.WhisperFeatureExtractor(**pre)
    clips = []
    for i, (n, f) in enumerate([(15000, 300.0), (9000, 2000.0)]):
        t = torch.arange(n) / 19200
        c = 0.4 * torch.sin(2 * torch.pi * f * t) + 0.1 * torch.randn(n, generator=g)
        clips.append(write_wav(gen / f"clip{i}.wav", c, 19200).numpy())
    feats = fe(clips, sampling_rate=19200, return_tensors="pt")["input_features"]
    model = tf.WhisperForConditionalGeneration.from_pretrained(gen, attn_implementation="eager").eval()
    with torch.no_grad():
        ids = model.generate(input_features=feats, language="fr")
    save_file({"input_features": feats.contiguous(), "output_ids": ids.contiguous()},
              str(gen / "audio_fr.safetensors"))
    print("whisper_gen audio fr", feats.shape, ids.tolist())


# Beam search goldens: `beam.safetensors` next to the fixture, its settings in the file's metadata
# (the rest from the fixture's own generation settings).
BEAMS = {
    "t5": dict(num_beams=3),
    "t5_v11": dict(num_beams=4, length_penalty=0.6, early_stopping=True),
    "bart": dict(num_beams=4, length_penalty=2.0, early_stopping=True, num_return_sequences=2),
    "mbart": dict(num_beams=2, length_penalty=0.5, early_stopping="never"),
    "marian": dict(num_beams=4),
    "m2m_100": dict(num_beams=3, length_penalty=1.5),
}


def beams():
    for name, settings in BEAMS.items():
        if ONLY and name not in ONLY and "beams" not in ONLY:
            continue
        path = OUT / name
        cls = {"t5": tf.T5ForConditionalGeneration, "t5_v11": tf.T5ForConditionalGeneration,
               "bart": tf.BartForConditionalGeneration, "mbart": tf.MBartForConditionalGeneration,
               "marian": tf.MarianMTModel, "m2m_100": tf.M2M100ForConditionalGeneration}[name]
        model = cls.from_pretrained(path, attn_implementation="eager").eval()
        x = {"marian": marian_inputs, "m2m_100": bart_inputs}.get(name, bart_inputs if name.endswith("bart") else inputs)(False)
        with torch.no_grad():
            ids = model.generate(**x, max_new_tokens=10, do_sample=False, **settings)
        meta = {k: json.dumps(v) for k, v in settings.items()}
        save_file({**x, "output_ids": ids.contiguous()}, str(path / "beam.safetensors"), metadata=meta)
        print(f"{name} beams {settings}: {ids.tolist()}")


if __name__ == "__main__":
    t5()
    bart()
    whisper()
    whisper_generation()
    whisper_audio()
    marian_pegasus()
    m2m_100()
    nllb()
    opus_mt()
    m2m_100_spm()
    plbart_blenderbot()
    beams()
