//! Llama 3.2 Vision's tiled vision tower (`MllamaVisionModel`).
//!
//! The processor cuts each image into up to `max_num_tiles` square tiles of `image_size` pixels
//! (`pixel_values` `[batch, images, tiles, channels, size, size]`), names the tiles' layout by an
//! aspect ratio id (`aspect_ratio_ids` `[batch, images]`, 0 for a padding image) and marks the real
//! tiles (`aspect_ratio_mask` `[batch, images, tiles]`). Each tile's patches are embedded (a
//! convolution whose kernel is the patch, a matrix product here), take the aspect ratio's gated tile
//! embedding, a class token, the gated mix of a position table and the aspect ratio's per-tile
//! position table, and a layer norm; padded to a multiple of 8 patches, every tile of an image
//! then runs through the local layers together (a patch attends to every other but where both are
//! padding or in a padding tile), a layer norm, a second gated tile embedding, and the gated global
//! layers. The output is each patch's last state with the `intermediate_layers_indices` local
//! layers' outputs beside it (feature by feature, interleaved as transformers stacks them):
//! `[batch, images, tiles, patches, hidden · (1 + intermediate)]`.

use oxtorch_tensor::{DType, Tensor};

use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{eager_attention, lowest, Activation, Embedding, LayerNorm, Linear};
use crate::weights::Vars;

/// One encoder layer: pre-norm attention and MLP, each branch scaled by `tanh` of its gate in the
/// global layers.
#[derive(Debug, Clone)]
struct Layer {
    norm1: LayerNorm,
    q: Linear,
    k: Linear,
    v: Linear,
    o: Linear,
    norm2: LayerNorm,
    fc1: Linear,
    fc2: Linear,
    /// `tanh(gate_attn)`, `tanh(gate_ffn)` `[1]`: the global layers'
    gates: Option<(Tensor, Tensor)>,
}

impl Layer {
    fn load(vars: &Vars<'_>, hidden: usize, inner: usize, eps: f64, gated: bool) -> Result<Self> {
        let attn = vars.pp("self_attn");
        let gates = match gated {
            true => Some((vars.get("gate_attn", &[1])?.tanh()?, vars.get("gate_ffn", &[1])?.tanh()?)),
            false => None,
        };
        Ok(Layer {
            norm1: LayerNorm::load(&vars.pp("input_layernorm"), hidden, eps)?,
            q: Linear::load(&attn.pp("q_proj"), hidden, hidden, false)?,
            k: Linear::load(&attn.pp("k_proj"), hidden, hidden, false)?,
            v: Linear::load(&attn.pp("v_proj"), hidden, hidden, false)?,
            o: Linear::load(&attn.pp("o_proj"), hidden, hidden, false)?,
            norm2: LayerNorm::load(&vars.pp("post_attention_layernorm"), hidden, eps)?,
            fc1: Linear::load(&vars.pp("mlp.fc1"), hidden, inner, true)?,
            fc2: Linear::load(&vars.pp("mlp.fc2"), inner, hidden, true)?,
            gates,
        })
    }

    /// `x` `[n, seq, hidden]` after the layer, with the additive `mask` `[n, 1, seq, seq]`.
    fn forward(&self, x: &Tensor, mask: &Tensor, heads: usize, act: Activation) -> Result<Tensor> {
        let (n, s, h) = (x.dims()[0], x.dims()[1], x.dims()[2]);
        let d = h / heads;
        let normed = self.norm1.forward(x)?;
        let split = |t: Tensor| -> Result<Tensor> { Ok(t.reshape([n, s, heads, d])?.transpose(1, 2)?) };
        let (q, k, v) = (
            split(self.q.forward(&normed)?)?,
            split(self.k.forward(&normed)?)?,
            split(self.v.forward(&normed)?)?,
        );
        let ctx = eager_attention(&q, &k, &v, Some(mask), 1.0 / (d as f64).sqrt(), None)?;
        let mut attn = self.o.forward(&ctx.transpose(1, 2)?.reshape([n, s, h])?)?;
        if let Some((gate, _)) = &self.gates {
            attn = attn.mul(gate)?;
        }
        let x = x.add(&attn)?;
        let mut mlp = self.fc2.forward(&act.forward(&self.fc1.forward(&self.norm2.forward(&x)?)?)?)?;
        if let Some((_, gate)) = &self.gates {
            mlp = mlp.mul(gate)?;
        }
        Ok(x.add(&mlp)?)
    }
}

/// A gated embedding per aspect ratio: `[max_aspect_ratio_id + 1, tiles · width]` and `tanh(gate)`.
#[derive(Debug, Clone)]
struct TileEmbedding {
    table: Embedding,
    gate: Tensor,
}

impl TileEmbedding {
    /// The embeddings of `ids` `[n]`, `[n, tiles, rows, hidden]` scaled by the gate.
    fn of(&self, ids: &Tensor, tiles: usize, rows: usize, hidden: usize) -> Result<Tensor> {
        let n = ids.dims()[0];
        Ok(self.table.forward(ids)?.reshape([n, tiles, rows, hidden])?.mul(&self.gate)?)
    }
}

/// The tower (see the module docs).
#[derive(Debug, Clone)]
pub(crate) struct MllamaVisionTower {
    /// the patch convolution as a matrix `[hidden, channels · patch²]`
    patch: Linear,
    class_embedding: Tensor,
    /// `(1 - tanh(gate)) · embedding`, `[patches, hidden]`
    positions: Tensor,
    /// the per-tile position tables, gated by the same gate
    tile_positions: TileEmbedding,
    pre_tile: TileEmbedding,
    post_tile: TileEmbedding,
    layernorm_pre: LayerNorm,
    layernorm_post: LayerNorm,
    local: Vec<Layer>,
    global: Vec<Layer>,
    /// the local layers whose outputs join the last state, in order
    intermediate: Vec<usize>,
    /// `vision_output_dim`
    output: usize,
    /// why the config's tower cannot run, where it cannot (the images are then an error)
    unusable: Option<String>,
    heads: usize,
    hidden: usize,
    channels: usize,
    patch_size: usize,
    image_size: usize,
    max_tiles: usize,
    act: Activation,
}

impl MllamaVisionTower {
    /// The tower under `vars` from its `vision_config`.
    pub(crate) fn load(vars: &Vars<'_>, cfg: &Config) -> Result<Self> {
        let hidden = cfg.usize_or("hidden_size", 1280)?;
        let heads = match cfg.get("attention_heads") {
            Some(_) => cfg.usize("attention_heads")?,
            None => cfg.usize_or("num_attention_heads", 16)?,
        };
        let inner = cfg.usize_or("intermediate_size", 5120)?;
        let channels = cfg.usize_or("num_channels", 3)?;
        let image_size = cfg.usize_or("image_size", 448)?;
        let patch_size = cfg.usize_or("patch_size", 14)?;
        let max_tiles = cfg.usize_or("max_num_tiles", 4)?;
        let eps = cfg.f64_or("norm_eps", 1e-5)?;
        if heads == 0 || hidden % heads != 0 || patch_size == 0 || image_size < patch_size || max_tiles == 0 {
            return Err(Error::Config(format!(
                "vision_config: hidden_size {hidden} in {heads} heads, image_size {image_size} in patches of \
                 {patch_size}, max_num_tiles {max_tiles}: not a tower"
            )));
        }
        // (Every size a table or a tile's sequence takes, checked against overflow.)
        let too_large = || {
            Error::Config(format!(
                "vision_config: {max_tiles} tiles of {image_size} pixels in patches of {patch_size}, \
                 {channels} channels, hidden_size {hidden}: too large"
            ))
        };
        let side = image_size / patch_size;
        let patches = side.checked_mul(side).and_then(|n| n.checked_add(1)).ok_or_else(too_large)?;
        let tile_table =
            max_tiles.checked_mul(patches).and_then(|n| n.checked_mul(hidden)).ok_or_else(too_large)?;
        let tile_width = max_tiles.checked_mul(hidden).ok_or_else(too_large)?;
        let kernel =
            patch_size.checked_mul(patch_size).and_then(|n| n.checked_mul(channels)).ok_or_else(too_large)?;
        let padded = patches.checked_next_multiple_of(8).ok_or_else(too_large)?;
        max_tiles.checked_mul(padded).and_then(|n| n.checked_mul(hidden)).ok_or_else(too_large)?;
        let ratios = match cfg.get("supported_aspect_ratios") {
            Some(serde_json::Value::Array(a)) => a.len(),
            _ => 8,
        };
        let layers = cfg.usize_or("num_hidden_layers", 32)?;
        let output = cfg.usize_or("vision_output_dim", 7680)?;
        // (A config transformers loads but whose tower cannot run: the checkpoint still runs on text.)
        let (intermediate, unusable) = match intermediate_layers(cfg, layers) {
            Ok(i) if i.is_empty() => (i, Some("intermediate_layers_indices is empty: transformers' tower stacks the intermediate layers' outputs and cannot stack none".to_string())),
            Ok(i) if Some(output) != hidden.checked_mul(i.len() + 1) => {
                let why = format!("vision_output_dim {output} must be hidden_size {hidden} times 1 + the {} intermediate layers", i.len());
                (i, Some(why))
            }
            Ok(i) => (i, None),
            Err(e) => (Vec::new(), Some(e.to_string())),
        };
        let table = |name: &str, width: usize| -> Result<TileEmbedding> {
            let v = vars.pp(name);
            Ok(TileEmbedding {
                table: Embedding::load(&v.pp("embedding"), ratios + 1, width)?,
                gate: v.get("gate", &[1])?.tanh()?,
            })
        };
        let gated = vars.pp("gated_positional_embedding");
        let gate = gated.get("gate", &[1])?.tanh()?;
        let positions = gated.get("embedding", &[patches, hidden])?.mul(&gate.neg()?.add(1.0)?)?;
        let tile_positions = TileEmbedding {
            table: Embedding::load(&gated.pp("tile_embedding"), ratios + 1, tile_table)?,
            gate,
        };
        let conv = vars.get("patch_embedding.weight", &[hidden, channels, patch_size, patch_size])?;
        let load_layers = |name: &str, n: usize, gated: bool| -> Result<Vec<Layer>> {
            (0..n)
                .map(|i| Layer::load(&vars.pp(format!("{name}.layers.{i}")), hidden, inner, eps, gated))
                .collect()
        };
        Ok(MllamaVisionTower {
            patch: Linear { weight: conv.reshape([hidden, kernel])?, bias: None },
            class_embedding: vars.get("class_embedding", &[hidden])?,
            positions,
            tile_positions,
            pre_tile: table("pre_tile_positional_embedding", tile_width)?,
            post_tile: table("post_tile_positional_embedding", tile_width)?,
            layernorm_pre: LayerNorm::load(&vars.pp("layernorm_pre"), hidden, 1e-5)?,
            layernorm_post: LayerNorm::load(&vars.pp("layernorm_post"), hidden, 1e-5)?,
            local: load_layers("transformer", layers, false)?,
            global: load_layers("global_transformer", cfg.usize_or("num_global_layers", 8)?, true)?,
            intermediate,
            output,
            unusable,
            heads,
            hidden,
            channels,
            patch_size,
            image_size,
            max_tiles,
            act: Activation::from_name(cfg.str_or("hidden_act", "gelu")?)?,
        })
    }

    /// The tiles' patches and the class token (`(image_size / patch_size)² + 1`).
    pub(crate) fn patches(&self) -> usize {
        (self.image_size / self.patch_size).pow(2) + 1
    }

    /// The output width (`vision_output_dim`).
    pub(crate) fn output_dim(&self) -> usize {
        self.output
    }

    /// The tower on `pixel_values` `[batch, images, tiles, channels, size, size]` with
    /// `aspect_ratio_ids` `[batch, images]` and `aspect_ratio_mask` `[batch, images, tiles]`:
    /// `[batch, images, tiles, patches, output_dim]` (see the module docs).
    pub(crate) fn forward(
        &self,
        pixel_values: &Tensor,
        ratio_ids: &Tensor,
        ratio_mask: &Tensor,
    ) -> Result<Tensor> {
        let (c, size, p, hidden) = (self.channels, self.image_size, self.patch_size, self.hidden);
        let (b, images, tiles) = match pixel_values.dims() {
            &[b, n, t, ch, hh, ww] if t == self.max_tiles && ch == c && hh == size && ww == size => (b, n, t),
            d => {
                return Err(Error::Input(format!(
                    "pixel_values must be [batch, images, {}, {c}, {size}, {size}] (max_num_tiles tiles of \
                     image_size pixels), got {d:?}",
                    self.max_tiles
                )))
            }
        };
        if ratio_ids.dims() != [b, images] {
            return Err(Error::Input(format!(
                "aspect_ratio_ids must be [{b}, {images}] (one per image), got {:?}",
                ratio_ids.dims()
            )));
        }
        if ratio_mask.dims() != [b, images, tiles] {
            return Err(Error::Input(format!(
                "aspect_ratio_mask must be [{b}, {images}, {tiles}] (one per tile), got {:?}",
                ratio_mask.dims()
            )));
        }
        if let Some(why) = &self.unusable {
            return Err(Error::Config(format!("the vision tower cannot run: {why}")));
        }
        let n = b * images;
        let dtype = self.class_embedding.dtype();
        let device = self.class_embedding.device();
        let ids = super::ids_as_i64("aspect_ratio_ids", ratio_ids)?.to(device)?.reshape([n])?;
        // Each tile's patches, channel by row by column, as the convolution's kernel reads them (the
        // pixels past the last whole patch unread, as its stride leaves them).
        let side = size / p;
        let x = pixel_values.to(device)?.to_dtype(dtype)?;
        let x =
            x.narrow(4, 0, side * p)?.narrow(5, 0, side * p)?.reshape([n * tiles, c, side, p, side, p])?;
        let x = x.permute([0, 2, 4, 1, 3, 5])?.reshape([n * tiles, side * side, c * p * p])?;
        let x = self.patch.forward(&x)?.reshape([n, tiles, side * side, hidden])?;
        let x = x.add(&self.pre_tile.of(&ids, tiles, 1, hidden)?)?;
        let class = self.class_embedding.reshape([1, 1, 1, hidden])?.expand([n, tiles, 1, hidden])?;
        let patches = self.patches();
        let x = Tensor::cat(&[&class, &x], 2)?;
        let x = x.add(&self.positions.reshape([1, 1, patches, hidden])?)?;
        let x = x.add(&self.tile_positions.of(&ids, tiles, patches, hidden)?)?;
        let x = self.layernorm_pre.forward(&x)?;
        // Padded to a multiple of 8 patches per tile.
        let padded = patches.div_ceil(8) * 8;
        let x = x.pad(&[0, 0, 0, (padded - patches) as isize], "constant", Some(0.0))?;
        let mask = self.mask(ratio_mask, n, tiles, padded, dtype)?;
        let mut x = x.reshape([n, tiles * padded, hidden])?;
        let mut kept = Vec::with_capacity(self.intermediate.len());
        for (i, layer) in self.local.iter().enumerate() {
            x = layer.forward(&x, &mask, self.heads, self.act)?;
            if self.intermediate.contains(&i) {
                kept.push((i, x.clone()));
            }
        }
        let x = self.layernorm_post.forward(&x)?.reshape([n, tiles, padded, hidden])?;
        let mut x =
            x.add(&self.post_tile.of(&ids, tiles, 1, hidden)?)?.reshape([n, tiles * padded, hidden])?;
        for layer in &self.global {
            x = layer.forward(&x, &mask, self.heads, self.act)?;
        }
        let unpad = |t: Tensor, width: usize| -> Result<Tensor> {
            Ok(t.reshape([n, tiles, padded, width])?.narrow(2, 0, patches)?)
        };
        // The intermediate states stacked on a last dim, feature by feature (torch.stack(dim=-1)).
        let states = self.intermediate.iter().map(|i| {
            let (_, t) = kept.iter().find(|(j, _)| j == i).expect("each intermediate layer's output is kept");
            t.unsqueeze(-1)
        });
        let states = states.collect::<std::result::Result<Vec<_>, _>>()?;
        let k = states.len();
        let stacked = Tensor::cat(&states.iter().collect::<Vec<_>>(), 3)?;
        let stacked = unpad(stacked.reshape([n, tiles * padded, hidden * k])?, hidden * k)?;
        let out = Tensor::cat(&[&unpad(x, hidden)?, &stacked], 3)?;
        Ok(out.reshape([b, images, tiles, patches, self.output])?)
    }

    /// The local and global layers' additive mask `[n, 1, tiles · padded, tiles · padded]`: a
    /// score is hidden where both its query and its key are padding (a padded patch or a tile
    /// `ratio_mask` does not mark), as transformers' `_prepare_aspect_ratio_attention_mask`.
    fn mask(
        &self,
        ratio_mask: &Tensor,
        n: usize,
        tiles: usize,
        padded: usize,
        dtype: DType,
    ) -> Result<Tensor> {
        let device = self.class_embedding.device();
        let real_tile = ratio_mask.to(device)?.ne(0.0)?.reshape([n, tiles, 1])?;
        let patches = self.patches();
        let real_patch: Vec<bool> = (0..padded).map(|i| i < patches).collect();
        let real_patch = Tensor::from_vec(real_patch, [1, 1, padded])?.to(device)?;
        let padding = real_tile.logical_and(&real_patch)?.logical_not()?.reshape([n, tiles * padded])?;
        let both = padding.unsqueeze(2)?.logical_and(&padding.unsqueeze(1)?)?;
        let zeros = Tensor::zeros([n, tiles * padded, tiles * padded], (dtype, device))?;
        Ok(both.where_self(lowest(dtype), &zeros)?.unsqueeze(1)?)
    }
}

/// `intermediate_layers_indices` (Python indices into the `layers` local layers' outputs; default
/// `[3, 7, 15, 23, 30]`), as layer numbers.
fn intermediate_layers(cfg: &Config, layers: usize) -> Result<Vec<usize>> {
    let given: Vec<i64> = match cfg.get("intermediate_layers_indices") {
        None | Some(serde_json::Value::Null) => vec![3, 7, 15, 23, 30],
        Some(serde_json::Value::Array(a)) => {
            a.iter().map(|v| v.as_i64().ok_or_else(|| bad_indices(cfg))).collect::<Result<_>>()?
        }
        Some(_) => return Err(bad_indices(cfg)),
    };
    given
        .into_iter()
        .map(|i| {
            let layer = if i < 0 { layers as i64 + i } else { i };
            if (0..layers as i64).contains(&layer) {
                Ok(layer as usize)
            } else {
                Err(Error::Config(format!(
                    "intermediate_layers_indices: {i} is not one of the {layers} vision layers"
                )))
            }
        })
        .collect()
}

fn bad_indices(cfg: &Config) -> Error {
    Error::Config(format!(
        "\"intermediate_layers_indices\" must list layer indices, got {}",
        cfg.get("intermediate_layers_indices").map_or("nothing".into(), |v| v.to_string())
    ))
}
