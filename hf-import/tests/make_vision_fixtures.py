"""Dev-time script: tiny random-weight image models (ViT, CLIP) and transformers' outputs on them.

Run with the reference environment (torch + transformers 5, no network):

    /work/.refenv/bin/python hf-import/tests/make_vision_fixtures.py [NAME...]

As `make_fixtures.py` does for the text families (whose helpers it uses): each model is built from
a config object (eager attention), every parameter randomised, saved with `save_pretrained` under
`hf-import/tests/fixtures/<name>/`, and run with `output_hidden_states=True`; `expected.safetensors`
holds the inputs (`pixel_values`, and for CLIP `input_ids` / `attention_mask`) and the outputs under
transformers' field names, nested ones joined with dots (`vision_model_output.pooler_output`), all
float32.
"""

import shutil

import torch
import transformers as tf
from safetensors.torch import save_file

from make_fixtures import ONLY, OUT, flatten, labels, randomise

TOWER = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64)


def pixels(batch, channels, height, width, seed):
    """Normalised-image-like pixels ~ N(0, 1)."""
    g = torch.Generator().manual_seed(seed)
    return torch.randn((batch, channels, height, width), generator=g)


def build(name, model_cls, config, seed, x):
    """Saves the randomised model `name` and its outputs on inputs `x` (a dict)."""
    if ONLY and name not in ONLY:
        return None
    torch.manual_seed(seed)
    model = model_cls(config).eval()
    randomise(model, seed)
    path = OUT / name
    shutil.rmtree(path, ignore_errors=True)
    model.save_pretrained(path)
    with torch.no_grad():
        out = model(**x, output_hidden_states=True)
    flat = flatten(out)
    save_file({**x, **flat}, str(path / "expected.safetensors"))
    print(f"{name}: {sorted(flat)[:6]}... {sum(f.stat().st_size for f in path.iterdir())} bytes")
    return model


def vit():
    # A non-square image whose sides the patches divide; then a square one they do not (the
    # convolution leaves out the last 2 pixels of each side), no query/key/value biases, gelu_new.
    vit = dict(TOWER, attn_implementation="eager", layer_norm_eps=1e-6)
    build("vit", tf.ViTModel, tf.ViTConfig(**vit, image_size=[16, 12], patch_size=4), 60,
          {"pixel_values": pixels(2, 3, 16, 12, 60)})
    build("vit_cls", tf.ViTForImageClassification,
          tf.ViTConfig(**vit, image_size=18, patch_size=4, qkv_bias=False, hidden_act="gelu_new",
                       **labels("cat", "dog", "bird")), 61,
          {"pixel_values": pixels(3, 3, 18, 18, 61)})


if __name__ == "__main__":
    vit()
