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

from make_fixtures import ONLY, OUT, labels, randomise, rewritten

TOWER = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64)


def flatten(out, prefix=""):
    """transformers' output object as flat float32 tensors: tuples and lists as `hidden_states.0`, ..., nested
    outputs (CLIP's `text_model_output`) joined with dots."""
    flat = {}
    for key, value in out.items():
        name = f"{prefix}{key}"
        if value is None:
            continue
        if isinstance(value, (tuple, list)):
            for i, v in enumerate(value):
                flat[f"{name}.{i}"] = v.detach().float().clone().contiguous()
        elif isinstance(value, torch.Tensor):
            flat[name] = value.detach().float().clone().contiguous()
        else:
            flat.update(flatten(value, f"{name}."))
    return flat


def pixels(batch, channels, height, width, seed):
    """Normalised-image-like pixels ~ N(0, 1)."""
    g = torch.Generator().manual_seed(seed)
    return torch.randn((batch, channels, height, width), generator=g)


def build(name, model_cls, config, seed, x, prepare=None):
    """Saves the randomised model `name` (then given to `prepare`, if any) and its outputs on inputs `x` (a dict)."""
    if ONLY and name not in ONLY:
        return None
    torch.manual_seed(seed)
    model = model_cls(config).eval()
    randomise(model, seed)
    if prepare is not None:
        prepare(model, seed)
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



def vit_msn_ijepa():
    """ViT-MSN (`vit_msn_cls`: the classifier on the class token, no pooler anywhere) and I-JEPA (`ijepa`: no class
    token, no pooler; `ijepa_cls`: the classifier on the mean of every token), on 16x12 images of 4-pixel patches."""
    vit = dict(TOWER, attn_implementation="eager", layer_norm_eps=1e-6, image_size=[16, 12], patch_size=4)
    x = {"pixel_values": pixels(2, 3, 16, 12, 62)}
    build("vit_msn_cls", tf.ViTMSNForImageClassification, tf.ViTMSNConfig(**vit, **labels("cat", "dog", "bird")),
          63, x)
    build("ijepa", tf.IJepaModel, tf.IJepaConfig(**vit), 64, x)
    build("ijepa_cls", tf.IJepaForImageClassification,
          tf.IJepaConfig(**vit, hidden_act="gelu_new", **labels("cat", "dog", "bird")), 65, x)


def vit_mae():
    """ViT-MAE on 16x16 images of 4-pixel patches, the patches kept chosen by a given `noise`: `vit_mae` (the base
    model, half the 16 patches masked); `vit_mae_pretrain` (the pre-training model: three quarters masked, gelu_new,
    the decoder 8 wide with 2 blocks of 2 heads filling the masked places with its mask token, the loss on
    per-patch normalised pixels)."""
    vit = dict(TOWER, attn_implementation="eager", image_size=16, patch_size=4)
    g = torch.Generator().manual_seed(260)
    x = {"pixel_values": pixels(2, 3, 16, 16, 261), "noise": torch.rand(2, 16, generator=g)}
    build("vit_mae", tf.ViTMAEModel, tf.ViTMAEConfig(**vit, mask_ratio=0.5), 262, x)
    build("vit_mae_pretrain", tf.ViTMAEForPreTraining,
          tf.ViTMAEConfig(**vit, hidden_act="gelu_new", decoder_hidden_size=8, decoder_num_hidden_layers=2,
                          decoder_num_attention_heads=2, decoder_intermediate_size=16, norm_pix_loss=True), 263, x)


def yolos():
    """YOLOS on 8-pixel patches, positions stored for a 3x4 grid (24x32 images) and resampled bicubically, 3
    detection tokens: `yolos` (the base model with its pooler, no mid-position tables, 32x40 images); `yolos_det`
    (the detector: each block but the last adding its own resampled table, 40x24 images, 3 labels)."""
    vit = dict(TOWER, num_hidden_layers=3, attn_implementation="eager", image_size=[24, 32], patch_size=8,
               num_detection_tokens=3)
    build("yolos", tf.YolosModel, tf.YolosConfig(**vit, use_mid_position_embeddings=False), 290,
          {"pixel_values": pixels(2, 3, 32, 40, 291)})
    build("yolos_det", tf.YolosForObjectDetection, tf.YolosConfig(**vit, **labels("cat", "dog", "bird")), 292,
          {"pixel_values": pixels(2, 3, 40, 24, 293)})


# CLIP's tiny towers: text 32 wide over a 100-token vocabulary (eos 99, as the real tokenizer pads
# with its eos), vision 48 wide on 16x16 images in 4x4 patches, both projected to 24.
CLIP_TEXT = dict(TOWER, vocab_size=100, max_position_embeddings=16, eos_token_id=99, bos_token_id=98,
                 pad_token_id=1, projection_dim=24)
CLIP_VISION = dict(TOWER, hidden_size=48, image_size=16, patch_size=4, projection_dim=24)


def clip_text_inputs():
    """Two texts of 7 tokens: one padded with eos (the real tokenizer's padding) after its first eos,
    one whose eos is its last token."""
    ids = torch.tensor([[98, 17, 42, 5, 99, 99, 99], [98, 64, 12, 77, 30, 23, 99]], dtype=torch.int64)
    mask = torch.tensor([[1] * 5 + [0] * 2, [1] * 7], dtype=torch.int64)
    return {"input_ids": ids, "attention_mask": mask}


def clip():
    config = tf.CLIPConfig(text_config=CLIP_TEXT, vision_config=CLIP_VISION, projection_dim=24,
                           logit_scale_init_value=2.0, attn_implementation="eager")
    build("clip", tf.CLIPModel, config, 62, {**clip_text_inputs(), "pixel_values": pixels(3, 3, 16, 16, 62)})
    # Before transformers' PR #24773 the configs said eos 2, and the pooled token is the highest id.
    legacy = dict(CLIP_TEXT, eos_token_id=2, hidden_act="gelu")
    build("clip_text_legacy_eos", tf.CLIPTextModelWithProjection,
          tf.CLIPTextConfig(**legacy, attn_implementation="eager"), 63, clip_text_inputs())
    build("clip_text", tf.CLIPTextModel, tf.CLIPTextConfig(**CLIP_TEXT, attn_implementation="eager"), 64,
          clip_text_inputs())
    odd = dict(CLIP_VISION, image_size=18)
    build("clip_vision_proj", tf.CLIPVisionModelWithProjection,
          tf.CLIPVisionConfig(**odd, attn_implementation="eager"), 65, {"pixel_values": pixels(2, 3, 18, 18, 65)})
    build("clip_vision", tf.CLIPVisionModel, tf.CLIPVisionConfig(**CLIP_VISION, attn_implementation="eager"), 66,
          {"pixel_values": pixels(2, 3, 16, 16, 66)})
    build("clip_cls", tf.CLIPForImageClassification,
          tf.CLIPConfig(text_config=CLIP_TEXT, vision_config=CLIP_VISION, attn_implementation="eager",
                        **labels("cat", "dog", "bird")), 67, {"pixel_values": pixels(2, 3, 16, 16, 67)})


SIGLIP_TEXT = dict(TOWER, vocab_size=100, max_position_embeddings=16, projection_size=24)
SIGLIP_VISION = dict(TOWER, hidden_size=48, image_size=16, patch_size=4)


def siglip():
    # Texts padded on the right (the pooled last token is then padding, as transformers has it).
    x = {**clip_text_inputs(), "pixel_values": pixels(3, 3, 16, 16, 68)}
    # (The text head projects to the vision width, where the image embeddings live.)
    config = tf.SiglipConfig(text_config=dict(SIGLIP_TEXT, projection_size=48), vision_config=SIGLIP_VISION,
                             attn_implementation="eager")
    model = build("siglip", tf.SiglipModel, config, 68, x)
    build("siglip_vision", tf.SiglipVisionModel,
          tf.SiglipVisionConfig(**dict(SIGLIP_VISION, image_size=18), attn_implementation="eager"), 69,
          {"pixel_values": pixels(2, 3, 18, 18, 69)})
    build("siglip_text", tf.SiglipTextModel, tf.SiglipTextConfig(**SIGLIP_TEXT, attn_implementation="eager"), 70,
          clip_text_inputs())


def dinov2():
    # Positions for a 4x4 grid (16px images in 4px patches): the first fixture feeds 24x20 images, so
    # they are resampled bicubically to 6x5; layer scales randomised too. The classifier: SwiGLU
    # blocks (the Hub's fused weights_in), at the configured size (positions as stored).
    dino = dict(TOWER, image_size=16, patch_size=4, layer_norm_eps=1e-6, attn_implementation="eager")
    build("dinov2", tf.Dinov2Model, tf.Dinov2Config(**dino), 71, {"pixel_values": pixels(2, 3, 24, 20, 71)})
    build("dinov2_cls", tf.Dinov2ForImageClassification,
          tf.Dinov2Config(**dino, use_swiglu_ffn=True, mlp_ratio=3, **labels("a", "b", "c")), 72,
          {"pixel_values": pixels(2, 3, 16, 16, 72)})
    # With registers: 3 register tokens after the class token, positions resampled antialiased for
    # 12x28 images (down one side, up the other).
    build("dinov2_reg", tf.Dinov2WithRegistersModel, tf.Dinov2WithRegistersConfig(**dino, num_register_tokens=3), 73,
          {"pixel_values": pixels(2, 3, 12, 28, 73)})
    build("dinov2_reg_cls", tf.Dinov2WithRegistersForImageClassification,
          tf.Dinov2WithRegistersConfig(**dino, num_register_tokens=2, **labels("a", "b")), 74,
          {"pixel_values": pixels(2, 3, 20, 20, 74)})


def resnet():
    """ResNet: the base model with basic layers (`last_hidden_state`, `pooler_output` [b, c, 1, 1]); the classifier with
    bottlenecks (the stride in the 3×3), the first stage downsampling too, gelu after each sum; bottlenecks striding
    in their first 1×1 (`downsample_in_bottleneck`). The batch norms' running statistics are drawn too (mean
    ~ N(0, 0.1), variance ~ U(0.5, 1.5)); non-square images of odd sides."""
    base = dict(embedding_size=8, hidden_sizes=[8, 16, 24], depths=[1, 2, 1])
    x = {"pixel_values": pixels(2, 3, 37, 29, 70)}
    for name, cls, config, seed in [
        ("resnet", tf.ResNetModel, tf.ResNetConfig(**base, layer_type="basic"), 71),
        ("resnet_cls", tf.ResNetForImageClassification,
         tf.ResNetConfig(**dict(base, hidden_sizes=[8, 16, 32]), downsample_in_first_stage=True, hidden_act="gelu",
                         **labels("cat", "dog", "bird")), 72),
        ("resnet_bottleneck_stride", tf.ResNetForImageClassification,
         tf.ResNetConfig(**dict(base, hidden_sizes=[12, 16, 20]), downsample_in_bottleneck=True, num_labels=4), 73),
    ]:
        if ONLY and name not in ONLY:
            continue
        torch.manual_seed(seed)
        model = cls(config).eval()
        randomise(model, seed)
        g = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for bn in (m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)):
                bn.running_mean.copy_(0.1 * torch.randn(bn.running_mean.shape, generator=g))
                bn.running_var.copy_(0.5 + torch.rand(bn.running_var.shape, generator=g))
        path = OUT / name
        shutil.rmtree(path, ignore_errors=True)
        model.save_pretrained(path)
        with torch.no_grad():
            out = model(**x, output_hidden_states=True)
        flat = flatten(out)
        save_file({**x, **flat}, str(path / "expected.safetensors"))
        print(f"{name}: {sorted(flat)}... {sum(f.stat().st_size for f in path.iterdir())} bytes")


def deit():
    """DeiT: the base model with its pooler (a distillation token after the class token, positions for both), the
    classifier on the class token, and the teacher-distilled classifier (the mean of the class token's and the
    distillation token's logits); a non-square image."""
    deit = dict(TOWER, attn_implementation="eager", image_size=[16, 12], patch_size=4)
    x = {"pixel_values": pixels(2, 3, 16, 12, 80)}
    build("deit", tf.DeiTModel, tf.DeiTConfig(**deit), 81, x)
    build("deit_cls", tf.DeiTForImageClassification, tf.DeiTConfig(**deit, **labels("a", "b", "c")), 82, x)
    build("deit_teacher", tf.DeiTForImageClassificationWithTeacher, tf.DeiTConfig(**deit, hidden_act="gelu_new",
          num_labels=4), 83, x)


def convnext():
    """ConvNeXt: the base model (layer scales; `pooler_output` the normed mean over positions), the classifier, and
    V2's classifier (global response normalisation, no layer scales); 3 stages, an image of odd sides."""
    base = dict(hidden_sizes=[8, 12, 16], depths=[1, 2, 1], num_stages=3, patch_size=2)
    x = {"pixel_values": pixels(2, 3, 37, 29, 90)}
    build("convnext", tf.ConvNextModel, tf.ConvNextConfig(**base), 91, x)
    build("convnext_cls", tf.ConvNextForImageClassification,
          tf.ConvNextConfig(**base, hidden_act="gelu_new", **labels("a", "b", "c")), 92, x)
    build("convnextv2_cls", tf.ConvNextV2ForImageClassification, tf.ConvNextV2Config(**base, num_labels=4), 93, x)


def swin():
    """Swin: 3 stages of 2x2-merged patches over an image of odd sides (padded to whole patches, 14x12 of them;
    windows of 3 over maps padded to whole windows, the second block of a stage shifted by 1 with its mask, the
    second stage's 7x6 map merged with padding to 4x3, whose one window is the whole map, unshifted); the base model
    (`pooler_output` the mean over positions, `reshaped_hidden_states`), and the classifier with absolute position
    embeddings, no query/key/value biases, a fractional `mlp_ratio`."""
    base = dict(embed_dim=8, depths=[2, 2, 1], num_heads=[2, 2, 4], window_size=3, patch_size=2, image_size=[28, 24],
                attn_implementation="eager")
    x = {"pixel_values": pixels(2, 3, 27, 23, 110)}
    build("swin", tf.SwinModel, tf.SwinConfig(**base), 111, x)
    build("swin_cls", tf.SwinForImageClassification,
          tf.SwinConfig(**base, use_absolute_embeddings=True, qkv_bias=False, hidden_act="gelu_new", mlp_ratio=2.5,
                        **labels("cat", "dog", "bird")), 112, x)
    if not ONLY or "swin_cls_renamed" in ONLY:
        # The classifier under transformers 5's names for the attention and the MLP (`attention.q_proj`,
        # `attention.relative_position_bias.relative_position_bias_table`, `mlp.fc1`, ...), transformers' own goldens
        # of the same network.
        renames = [("attention.self.query", "attention.q_proj"), ("attention.self.key", "attention.k_proj"),
                   ("attention.self.value", "attention.v_proj"),
                   ("attention.self.relative_position_bias_table",
                    "attention.relative_position_bias.relative_position_bias_table"),
                   ("attention.output.dense", "attention.o_proj"), ("intermediate.dense", "mlp.fc1"),
                   ("output.dense", "mlp.fc2")]

        def renamed(state):
            out = {}
            for k, v in state.items():
                for a, b in renames:
                    if a in k:
                        k = k.replace(a, b)
                        break
                out[k] = v
            assert any("q_proj" in k for k in out) and not any("self.query" in k for k in out)
            return out
        path = rewritten("swin_cls", "swin_cls_renamed", tensors=renamed)
        shutil.copy(OUT / "swin_cls" / "expected.safetensors", path / "expected.safetensors")


def beit():
    """BEiT and data2vec-vision on a 4x4 grid of 4-pixel patches: `beit`, the base model with a relative position bias
    per block, layer scales, mean pooling (`pooler_output` the normed mean of the patches); `beit_cls_shared`, the
    classifier with a shared bias, absolute positions, no layer scales, the class token pooled after the final norm,
    on 20x24 images (a 5x6 grid: the bias table resampled bilinearly, the positions bicubically);
    `data2vec_vision_cls`, data2vec-vision's classifier with both biases, mean pooling; `beit_renamed`, `beit` under
    transformers 5's module names."""
    base = dict(TOWER, attn_implementation="eager", patch_size=4, image_size=16)
    x = {"pixel_values": pixels(2, 3, 16, 16, 120)}
    model = build("beit", tf.BeitModel, tf.BeitConfig(**base, use_relative_position_bias=True), 121, x)
    if model is not None:
        # The same network under transformers 5's module names (its state dict, as `torch.save` would hold it).
        path = rewritten("beit", "beit_renamed",
                         tensors=lambda _: {k: v.contiguous() for k, v in model.state_dict().items()})
        shutil.copy(OUT / "beit" / "expected.safetensors", path / "expected.safetensors")
    wide = {"pixel_values": pixels(2, 3, 20, 24, 122)}
    build("beit_cls_shared", tf.BeitForImageClassification,
          tf.BeitConfig(**base, use_shared_relative_position_bias=True, use_absolute_position_embeddings=True,
                        layer_scale_init_value=0.0, use_mean_pooling=False, hidden_act="gelu_new",
                        **labels("cat", "dog", "bird")), 123, wide)
    build("data2vec_vision_cls", tf.Data2VecVisionForImageClassification,
          tf.Data2VecVisionConfig(**base, use_relative_position_bias=True, use_shared_relative_position_bias=True,
                                  num_labels=4), 124, x)


def batch_norm_stats(model, seed):
    """Every batch norm's running statistics drawn (a fresh model's are 0 and 1)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for bn in (m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)):
            bn.running_mean.copy_(0.1 * torch.randn(bn.running_mean.shape, generator=g))
            bn.running_var.copy_(0.5 + torch.rand(bn.running_var.shape, generator=g))


def segformer():
    """SegFormer on 37x29 images: three stages (overlapping 7x7 stride-4 and 3x3 stride-2 patch embeddings, keys and
    values from maps shrunk 4x and 2x, the Mix-FFN's depthwise convolution); the base model, the classifier (gelu_new,
    the last map averaged), and the segmentation head (each map projected, upsampled to the first's 10x8, fused,
    batch-normed, classified: `logits` [2, 5, 10, 8]); `segformer_seg_renamed`, the last under transformers 5's
    module names."""
    base = dict(num_encoder_blocks=3, depths=[1, 2, 1], sr_ratios=[4, 2, 1], hidden_sizes=[8, 16, 24],
                patch_sizes=[7, 3, 3], strides=[4, 2, 2], num_attention_heads=[1, 2, 4], mlp_ratios=[4, 2, 2],
                attn_implementation="eager")
    x = {"pixel_values": pixels(2, 3, 37, 29, 130)}
    build("segformer", tf.SegformerModel, tf.SegformerConfig(**base), 131, x)
    build("segformer_cls", tf.SegformerForImageClassification,
          tf.SegformerConfig(**base, hidden_act="gelu_new", **labels("cat", "dog", "bird")), 132, x)
    model = build("segformer_seg", tf.SegformerForSemanticSegmentation,
                  tf.SegformerConfig(**base, decoder_hidden_size=12, num_labels=5), 133, x, prepare=batch_norm_stats)
    if model is not None:
        path = rewritten("segformer_seg", "segformer_seg_renamed",
                         tensors=lambda _: {k: v.contiguous() for k, v in model.state_dict().items()})
        shutil.copy(OUT / "segformer_seg" / "expected.safetensors", path / "expected.safetensors")


def dinov3():
    """DINOv3's ViT: the class token, 2 register tokens and the patches of an 18x22 image (a 4x5 grid of 4-pixel
    patches, the last pixels left out) whose queries and keys turn by the 2-D rotary embedding, layer scales, the plain
    MLP; `dinov3_gated`: no registers, a key bias, the gated MLP under silu, a square image."""
    base = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=48, patch_size=4,
                image_size=16, attn_implementation="eager")
    build("dinov3", tf.DINOv3ViTModel, tf.DINOv3ViTConfig(**base, num_register_tokens=2, layerscale_value=0.5), 141,
          {"pixel_values": pixels(2, 3, 18, 22, 140)})
    build("dinov3_gated", tf.DINOv3ViTModel,
          tf.DINOv3ViTConfig(**base, use_gated_mlp=True, key_bias=True, hidden_act="silu", rope_theta=50.0), 142,
          {"pixel_values": pixels(2, 3, 16, 16, 143)})


def swinv2():
    """Swin V2 on the same 27x23 images as `swin` (configured for 28x24: windows of 3 from a 14x12 map, a second
    stage of 7x6, a last of 4x3 whose window clamps to 3, unshifted): cosine attention with the continuous position
    bias, post-normed branches, merging normed after its reduction; the base model, and the classifier with windows
    pretrained at 4 (the offsets scaled by them)."""
    base = dict(embed_dim=8, depths=[2, 2, 1], num_heads=[2, 2, 4], window_size=3, patch_size=2, image_size=[28, 24],
                attn_implementation="eager")
    x = {"pixel_values": pixels(2, 3, 27, 23, 150)}
    build("swinv2", tf.Swinv2Model, tf.Swinv2Config(**base), 151, x)
    build("swinv2_cls", tf.Swinv2ForImageClassification,
          tf.Swinv2Config(**base, pretrained_window_sizes=[4, 4, 0], hidden_act="gelu_new", qkv_bias=False,
                          **labels("cat", "dog", "bird")), 152, x)


def ast():
    """The Audio Spectrogram Transformer: overlapping 4x4 patches (strides 3 over 10 mel bins, 2 over 20 frames) of a
    spectrogram, the class and distillation tokens; the base model (`pooler_output` the two tokens' mean) and the
    audio classifier (a norm and a linear layer on it)."""
    ast = dict(TOWER, attn_implementation="eager", patch_size=4, frequency_stride=3, time_stride=2, max_length=20,
               num_mel_bins=10)
    g = torch.Generator().manual_seed(100)
    x = {"input_values": torch.randn((2, 20, 10), generator=g)}
    build("ast", tf.ASTModel, tf.ASTConfig(**ast), 101, x)
    build("ast_cls", tf.ASTForAudioClassification, tf.ASTConfig(**ast, **labels("speech", "music", "noise")), 102, x)


def depth_anything():
    """Depth Anything on a tiny DINOv2 backbone (4-pixel patches, positions stored for a 4x4 grid): `depth_anything`
    on 22x30 images (a 5x7 grid, the positions resampled, the last pixels left out), four blocks' outputs normed and
    reassembled at 4x (a transposed convolution), 2x, 1x and 0.5x (a strided convolution), fused coarse to fine, the
    relative head (`predicted_depth` [2, 20, 28]); `depth_anything_metric`: three maps named by `out_features` (the
    embeddings among them) reassembled at 3x, 1x and 0.25x, the SwiGLU backbone, the head on the middle fused map,
    sigmoid times max_depth 20, on square 16x16 images."""
    backbone = dict(model_type="dinov2", hidden_size=16, num_hidden_layers=4, num_attention_heads=2, patch_size=4,
                    image_size=16, reshape_hidden_states=False, layerscale_value=0.5)
    base = dict(patch_size=4, reassemble_hidden_size=16, fusion_hidden_size=8, head_hidden_size=4)
    build("depth_anything", tf.DepthAnythingForDepthEstimation,
          tf.DepthAnythingConfig(**base, backbone_config=dict(backbone, out_indices=[1, 2, 3, 4]),
                                 neck_hidden_sizes=[4, 6, 8, 10]), 161, {"pixel_values": pixels(2, 3, 22, 30, 160)})
    build("depth_anything_metric", tf.DepthAnythingForDepthEstimation,
          tf.DepthAnythingConfig(**base, backbone_config=dict(backbone, out_features=["stem", "stage2", "stage3"],
                                                              use_swiglu_ffn=True),
                                 neck_hidden_sizes=[4, 6, 8], reassemble_factors=[3, 1, 0.25], head_in_index=1,
                                 depth_estimation_type="metric", max_depth=20), 162,
          {"pixel_values": pixels(2, 3, 16, 16, 163)})


def dpt():
    """DPT on a tiny ViT (4-pixel patches, positions stored for a 4x4 grid, resampled bilinearly for 20x20 images):
    `dpt` the base model with its pooler; `dpt_depth` the depth head on 16x16 images, every block's output with the
    class token projected in, reassembled at 4x, 2x, 1x, 0.5x, fused (each map doubled), `predicted_depth` [2, 32, 32];
    `dpt_seg` the segmentation head on 20x20 images from blocks 1 and 3 (the class token added), reassembled at 2x and
    0.5x, the fusion's residual units batch-normed without biases, `logits` [2, 3, 20, 20]."""
    base = dict(hidden_size=16, num_hidden_layers=4, num_attention_heads=2, intermediate_size=32, patch_size=4,
                image_size=16, attn_implementation="eager")
    build("dpt", tf.DPTModel, tf.DPTConfig(**base), 171, {"pixel_values": pixels(2, 3, 20, 20, 170)})
    build("dpt_depth", tf.DPTForDepthEstimation,
          tf.DPTConfig(**base, backbone_out_indices=[0, 1, 2, 3], neck_hidden_sizes=[4, 6, 8, 10],
                       fusion_hidden_size=8), 172, {"pixel_values": pixels(2, 3, 16, 16, 173)})
    build("dpt_seg", tf.DPTForSemanticSegmentation,
          tf.DPTConfig(**base, backbone_out_indices=[1, 3], neck_hidden_sizes=[6, 8], reassemble_factors=[2, 0.5],
                       fusion_hidden_size=8, readout_type="add", use_batch_norm_in_fusion_residual=True,
                       hidden_act="gelu_new", num_labels=3), 174, {"pixel_values": pixels(2, 3, 20, 20, 175)},
          prepare=batch_norm_stats)


def dpt_hybrid():
    """DPT-Hybrid on a tiny BiT (3 stages, 2-group norms) on 48x48 images: the ViT's 3x3 tokens (16-pixel patches)
    projected from the backbone's last map, positions for that grid. `dpt_hybrid`: the base model with its pooler,
    the backbone pre-activation with symmetric padding, its stem and second stage handed on as
    `intermediate_activations`; `dpt_hybrid_depth`: the depth head, a post-activation backbone with SAME padding
    (transformers' defaults), its first two stages fed to the neck, blocks 2 and 3 reassembled at 1x and 0.5x."""
    base = dict(hidden_size=16, num_hidden_layers=4, num_attention_heads=2, intermediate_size=32, patch_size=16,
                image_size=48, attn_implementation="eager", is_hybrid=True)
    bit = dict(embedding_size=8, hidden_sizes=[8, 16, 24], depths=[1, 1, 1], num_groups=2)
    build("dpt_hybrid", tf.DPTModel,
          tf.DPTConfig(**base, backbone_config=dict(bit, out_indices=[0, 2, 3]), backbone_featmap_shape=[1, 24, 3, 3]),
          240, {"pixel_values": pixels(2, 3, 48, 48, 241)})
    build("dpt_hybrid_depth", tf.DPTForDepthEstimation,
          tf.DPTConfig(**base, backbone_config=dict(bit, layer_type="bottleneck", global_padding="same",
                                                    embedding_dynamic_padding=True,
                                                    out_features=["stage1", "stage2", "stage3"]),
                       backbone_featmap_shape=[1, 24, 3, 3], backbone_out_indices=[0, 1, 2, 3],
                       neck_hidden_sizes=[8, 16, 12, 12], reassemble_factors=[1, 1, 1, 0.5], fusion_hidden_size=8),
          242, {"pixel_values": pixels(2, 3, 48, 48, 243)})


def dpt_dinov2():
    """`dpt_dinov2`: DPT's depth model on a DINOv2 backbone (facebook/dpt-dinov2-small-nyu's layout: the normed
    tokens of blocks 1-4 with their class token projected in, 4-pixel patches, positions for 16x16 images resampled
    to 20x24)."""
    backbone = dict(model_type="dinov2", hidden_size=16, num_hidden_layers=4, num_attention_heads=2, mlp_ratio=2,
                    patch_size=4, image_size=16, out_indices=[1, 2, 3, 4], reshape_hidden_states=False)
    build("dpt_dinov2", tf.DPTForDepthEstimation,
          tf.DPTConfig(backbone_config=backbone, neck_hidden_sizes=[4, 6, 8, 10], fusion_hidden_size=8,
                       hidden_act="gelu_new"), 320, {"pixel_values": pixels(2, 3, 20, 24, 321)})


def mobilenet():
    """MobileNet on odd 19x13 images (TensorFlow's SAME padding uneven): V1 (`mobilenet_v1_cls`: widths an eighth,
    at least 4) and V2 (`mobilenet_v2_cls`: an eighth, rounded to 4s, an expansion in the stem, expansions of 2, the
    last layer not fine-grained; `mobilenet_v2`: the base model with symmetric padding and ReLU; `mobilenet_v2_seg`:
    output stride 8, the later strides dilations, the DeepLabV3 head), the batch norms' statistics drawn."""
    v2 = dict(depth_multiplier=0.125, depth_divisible_by=4, min_depth=4, expand_ratio=2, finegrained_output=False)
    x = {"pixel_values": pixels(2, 3, 19, 13, 180)}
    build("mobilenet_v1_cls", tf.MobileNetV1ForImageClassification,
          tf.MobileNetV1Config(depth_multiplier=0.125, min_depth=4, **labels("cat", "dog", "bird")), 181, x,
          prepare=batch_norm_stats)
    build("mobilenet_v2_cls", tf.MobileNetV2ForImageClassification,
          tf.MobileNetV2Config(**v2, first_layer_is_expansion=False, **labels("cat", "dog", "bird")), 182, x,
          prepare=batch_norm_stats)
    build("mobilenet_v2", tf.MobileNetV2Model, tf.MobileNetV2Config(**v2, tf_padding=False, hidden_act="relu"), 183,
          x, prepare=batch_norm_stats)
    build("mobilenet_v2_seg", tf.MobileNetV2ForSemanticSegmentation,
          tf.MobileNetV2Config(**v2, output_stride=8, num_labels=2), 184, x, prepare=batch_norm_stats)


def mobilevit():
    """MobileViT on odd 37x29 images (the blocks' 5x4, 3x2 and 2x1 maps resized up to whole patches and back),
    widths of 8-32, 2 heads, expansions of 2: `mobilevit_cls` (silu, the classifier on the widened map's mean);
    `mobilevit` (the base model: gelu, no query/key/value biases, 5x5 local and fusion kernels, 3-pixel patches);
    `mobilevit_seg` (output stride 8: the last two blocks dilate; DeepLabV3 with rates 1, 2, 3, 8 wide), the batch
    norms' statistics drawn."""
    base = dict(neck_hidden_sizes=[8, 8, 16, 16, 24, 24, 32], hidden_sizes=[16, 16, 24], num_attention_heads=2,
                expand_ratio=2.0, mlp_ratio=2.0, image_size=32)
    x = {"pixel_values": pixels(2, 3, 37, 29, 250)}
    build("mobilevit_cls", tf.MobileViTForImageClassification,
          tf.MobileViTConfig(**base, **labels("cat", "dog", "bird")), 251, x, prepare=batch_norm_stats)
    build("mobilevit", tf.MobileViTModel,
          tf.MobileViTConfig(**base, hidden_act="gelu", qkv_bias=False, conv_kernel_size=5, patch_size=3), 252, x,
          prepare=batch_norm_stats)
    build("mobilevit_seg", tf.MobileViTForSemanticSegmentation,
          tf.MobileViTConfig(**base, output_stride=8, atrous_rates=[1, 2, 3], aspp_out_channels=8, num_labels=2), 253,
          x, prepare=batch_norm_stats)


def mobilevitv2():
    """MobileViTV2 on odd images whose maps hold pixels past their whole patches (left out, and zero when folded
    back), widths scaled by 0.25, blocks of 1-2 layers, 16-wide attention units: `mobilevitv2_cls` (swish, the
    classifier on the last map's mean; 45x37 images: maps of 6x5, 3x3, 2x2); `mobilevitv2` (the base model: gelu, 5x5
    depthwise kernels, 3-pixel patches, 97x75 images: maps of 13x10, 7x5, 4x3); `mobilevitv2_seg` (output stride 8: the last two blocks dilate; DeepLabV3 with rates 1, 2, 3, 8
    wide), the batch norms' statistics drawn."""
    base = dict(width_multiplier=0.25, n_attn_blocks=[1, 2, 1], base_attn_unit_dims=[64, 64, 96], expand_ratio=2.0,
                image_size=32)
    x = {"pixel_values": pixels(2, 3, 45, 37, 300)}
    build("mobilevitv2_cls", tf.MobileViTV2ForImageClassification,
          tf.MobileViTV2Config(**base, **labels("cat", "dog", "bird")), 301, x, prepare=batch_norm_stats)
    build("mobilevitv2", tf.MobileViTV2Model,
          tf.MobileViTV2Config(**base, hidden_act="gelu", conv_kernel_size=5, patch_size=3), 302,
          {"pixel_values": pixels(1, 3, 97, 75, 304)}, prepare=batch_norm_stats)
    build("mobilevitv2_seg", tf.MobileViTV2ForSemanticSegmentation,
          tf.MobileViTV2Config(**base, output_stride=8, atrous_rates=[1, 2, 3], aspp_out_channels=8, num_labels=2),
          303, x, prepare=batch_norm_stats)


def pvt_v2():
    """PVTv2 on odd 37x29 images, three stages 8, 16 and 24 wide: `pvt_v2` (the base model: keys and values from
    maps shrunk 4x and 2x, no query/key/value biases); `pvt_v2_cls` (the classifier with linear attention: keys and
    values pooled to 7x7, a ReLU in the MLP)."""
    base = dict(num_encoder_blocks=3, depths=[1, 2, 1], sr_ratios=[4, 2, 1], hidden_sizes=[8, 16, 24],
                patch_sizes=[7, 3, 3], strides=[4, 2, 2], num_attention_heads=[1, 2, 3], mlp_ratios=[2, 2, 2])
    x = {"pixel_values": pixels(2, 3, 37, 29, 310)}
    build("pvt_v2", tf.PvtV2Model, tf.PvtV2Config(**base, qkv_bias=False), 311, x)
    build("pvt_v2_cls", tf.PvtV2ForImageClassification,
          tf.PvtV2Config(**base, linear_attention=True, hidden_act="gelu_new", **labels("cat", "dog", "bird")), 312, x)


def cvt():
    """CvT on odd 37x29 images, three stages 8, 16 and 24 wide (1, 2 and 3 heads): `cvt` (the base model, the last
    stage's class token); `cvt_cls` (the classifier on the normed map's mean: no class token, no query/key/value
    biases in the second stage, keys and values strided by 3 with 5x5 kernels), the batch norms' statistics drawn."""
    base = dict(embed_dim=[8, 16, 24], num_heads=[1, 2, 3], depth=[1, 2, 3], mlp_ratio=[2.0, 2.0, 3.0])
    x = {"pixel_values": pixels(2, 3, 37, 29, 270)}
    build("cvt", tf.CvtModel, tf.CvtConfig(**base), 271, x, prepare=batch_norm_stats)
    build("cvt_cls", tf.CvtForImageClassification,
          tf.CvtConfig(**base, cls_token=[False, False, False], qkv_bias=[True, False, True], kernel_qkv=[3, 5, 3], padding_q=[1, 2, 1],
                       padding_kv=[1, 2, 1], stride_kv=[2, 3, 2], **labels("cat", "dog", "bird")), 272, x,
          prepare=batch_norm_stats)


def levit_norm_stats(model, seed):
    """Every batch norm's running statistics drawn, LeViT's 1-d ones too."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for bn in (m for m in model.modules() if isinstance(m, (torch.nn.BatchNorm1d, torch.nn.BatchNorm2d))):
            bn.running_mean.copy_(0.1 * torch.randn(bn.running_mean.shape, generator=g))
            bn.running_var.copy_(0.5 + torch.rand(bn.running_var.shape, generator=g))


def levit():
    """LeViT on 96x96 images: a 6x6 grid of 16-pixel tokens, shrunk to 3x3 and 2x2 between the three stages (16,
    24, 32 wide; keys 4 wide), every batch norm's statistics drawn: `levit` (the base model), `levit_cls` (the
    classifier: no MLPs in the second stage, attention ratio 3), `levit_teacher` (the classifier and its distillation
    head averaged)."""
    base = dict(image_size=96, hidden_sizes=[16, 24, 32], num_attention_heads=[2, 3, 4], depths=[1, 2, 1],
                key_dim=[4, 4, 4])
    x = {"pixel_values": pixels(2, 3, 96, 96, 280)}
    build("levit", tf.LevitModel, tf.LevitConfig(**base), 281, x, prepare=levit_norm_stats)
    build("levit_cls", tf.LevitForImageClassification,
          tf.LevitConfig(**base, mlp_ratio=[2, 0, 2], attention_ratio=[2, 3, 2], **labels("cat", "dog", "bird")), 282,
          x, prepare=levit_norm_stats)
    build("levit_teacher", tf.LevitForImageClassificationWithTeacher,
          tf.LevitConfig(**base, **labels("cat", "dog", "bird")), 283, x, prepare=levit_norm_stats)


def efficientnet():
    """EfficientNet on odd 45x37 images: `efficientnet_cls` (widths a quarter rounded to 4s, repeats halved and
    rounded up, expansions of 2, the second block's depthwise padding symmetric, swish); `efficientnet` (the base model
    on three stages, repeats kept, max pooling, gelu), the batch norms' statistics drawn."""
    x = {"pixel_values": pixels(2, 3, 45, 37, 190)}
    build("efficientnet_cls", tf.EfficientNetForImageClassification,
          tf.EfficientNetConfig(width_coefficient=0.25, depth_coefficient=0.5, depth_divisor=4, hidden_dim=320,
                                expand_ratios=[1, 2, 2, 2, 2, 2, 2], depthwise_padding=[1],
                                **labels("cat", "dog", "bird")), 191, x, prepare=batch_norm_stats)
    build("efficientnet", tf.EfficientNetModel,
          tf.EfficientNetConfig(width_coefficient=0.25, depth_coefficient=1.0, depth_divisor=4, hidden_dim=320,
                                in_channels=[32, 16, 24], out_channels=[16, 24, 40], kernel_sizes=[3, 5, 3],
                                strides=[2, 2, 1], num_block_repeats=[1, 2, 2], expand_ratios=[1, 3, 2],
                                squeeze_expansion_ratio=0.5, pooling_type="max", hidden_act="gelu"), 192, x,
          prepare=batch_norm_stats)


def regnet():
    """RegNet on odd 23x19 images: `regnet_cls` (Y layers: squeeze-and-excitation, groups of 4 channels, the first
    stage downsampling); `regnet` (the base model, X layers, the first stage unstrided, gelu), the batch norms'
    statistics drawn."""
    base = dict(embedding_size=8, hidden_sizes=[8, 16, 24], depths=[1, 2, 1], groups_width=4)
    x = {"pixel_values": pixels(2, 3, 23, 19, 200)}
    build("regnet_cls", tf.RegNetForImageClassification, tf.RegNetConfig(**base, **labels("cat", "dog", "bird")),
          201, x, prepare=batch_norm_stats)
    build("regnet", tf.RegNetModel,
          tf.RegNetConfig(**base, layer_type="x", downsample_in_first_stage=False, hidden_act="gelu"), 202, x,
          prepare=batch_norm_stats)


def glpn():
    """GLPN: SegFormer's encoder as in `segformer` (`glpn`: the base model on 37x29 images); `glpn_depth` on 32x48
    images (maps that halve evenly, as transformers' decoder needs): the stages' maps brought to 8 channels (the
    first already is), fused coarse to fine by selective feature fusion, upsampled, the head on the finest,
    `predicted_depth` [2, 32, 48]; the batch norms' statistics drawn."""
    base = dict(num_encoder_blocks=3, depths=[1, 2, 1], sr_ratios=[4, 2, 1], hidden_sizes=[8, 16, 24],
                patch_sizes=[7, 3, 3], strides=[4, 2, 2], num_attention_heads=[1, 2, 4], mlp_ratios=[4, 2, 2],
                attn_implementation="eager")
    build("glpn", tf.GLPNModel, tf.GLPNConfig(**base), 211, {"pixel_values": pixels(2, 3, 37, 29, 210)})
    build("glpn_depth", tf.GLPNForDepthEstimation, tf.GLPNConfig(**base, decoder_hidden_size=8, max_depth=5), 212,
          {"pixel_values": pixels(2, 3, 32, 48, 213)}, prepare=batch_norm_stats)


def bit():
    """BiT on odd 27x21 images (weight-standardized convolutions, group norms of 2 groups): `bit_cls` (pre-activation
    layers, symmetric padding, the final norm); `bit` (the base model: post-activation layers, TensorFlow's SAME
    padding computed from each input, the max pool's too, output stride 8 so the last stage dilates)."""
    base = dict(embedding_size=8, hidden_sizes=[16, 32, 32], depths=[1, 2, 1], num_groups=2)
    x = {"pixel_values": pixels(2, 3, 27, 21, 220)}
    build("bit_cls", tf.BitForImageClassification, tf.BitConfig(**base, **labels("cat", "dog", "bird")), 221, x)
    build("bit", tf.BitModel,
          tf.BitConfig(**base, layer_type="bottleneck", global_padding="SAME", embedding_dynamic_padding=True,
                       output_stride=8), 222, x)


def poolformer():
    """PoolFormer on odd 27x21 images, three stages: `poolformer_cls` (pooling as the token mixer, its padding out of
    the counts, layer scales, the classifier's norm and mean); `poolformer` (the base model, no layer scales, a pool
    of 5, relu)."""
    base = dict(num_encoder_blocks=3, depths=[1, 2, 1], hidden_sizes=[8, 16, 24], patch_sizes=[7, 3, 3],
                strides=[4, 2, 2], padding=[2, 1, 1], mlp_ratio=2.0)
    x = {"pixel_values": pixels(2, 3, 27, 21, 230)}
    build("poolformer_cls", tf.PoolFormerForImageClassification,
          tf.PoolFormerConfig(**base, layer_scale_init_value=0.5, **labels("cat", "dog", "bird")), 231, x)
    build("poolformer", tf.PoolFormerModel,
          tf.PoolFormerConfig(**base, use_layer_scale=False, pool_size=5, hidden_act="relu"), 232, x)


if __name__ == "__main__":
    poolformer()
    bit()
    glpn()
    regnet()
    efficientnet()
    mobilenet()
    vit_msn_ijepa()
    dpt()
    dpt_hybrid()
    dpt_dinov2()
    vit_mae()
    yolos()
    mobilevit()
    mobilevitv2()
    pvt_v2()
    cvt()
    levit()
    depth_anything()
    swinv2()
    dinov3()
    segformer()
    beit()
    swin()
    ast()
    convnext()
    deit()
    resnet()
    vit()
    clip()
    siglip()
    dinov2()
