//! [`AutoModel`]'s table from an architecture's name to the family that builds it.

use super::*;

impl AutoModel {
    /// Builds `arch` (one of [`SUPPORTED_ARCHITECTURES`]) from `cfg` and `weights`.
    pub(super) fn load_architecture(arch: &str, cfg: &Config, weights: &Weights) -> Result<Self> {
        if let Some((runs_as, weights)) = encoder_aliases::aliased(arch, cfg, weights)? {
            return Self::load_architecture(&runs_as, cfg, &weights);
        }
        Ok(match arch {
            "BertModel" => AutoModel::Bert(BertModel::load(cfg, weights)?),
            "BertForMaskedLM" => AutoModel::BertForMaskedLM(BertForMaskedLM::load(cfg, weights)?),
            "DistilBertModel" => AutoModel::DistilBert(DistilBertModel::load(cfg, weights)?),
            "DistilBertForMaskedLM" => {
                AutoModel::DistilBertForMaskedLM(DistilBertForMaskedLM::load(cfg, weights)?)
            }
            "RobertaModel" | "XLMRobertaModel" | "CamembertModel" => {
                AutoModel::Roberta(RobertaModel::load(cfg, weights)?)
            }
            "ElectraModel" => AutoModel::Bert(load_electra(cfg, weights)?),
            "NomicBertModel" => AutoModel::NomicBert(NomicBertModel::load(cfg, weights)?),
            "GteModel" => AutoModel::NomicBert(NomicBertModel::load_gte(cfg, weights)?),
            "GteForSequenceClassification" => {
                AutoModel::SequenceClassifier(SequenceClassifier::load_gte(cfg, weights)?)
            }
            "EsmModel" => AutoModel::Esm(EsmModel::load(cfg, weights)?),
            "EsmForMaskedLM" => AutoModel::EsmForMaskedLM(EsmForMaskedLM::load(cfg, weights)?),
            "EsmForSequenceClassification" => {
                AutoModel::SequenceClassifier(SequenceClassifier::load_esm(cfg, weights)?)
            }
            "DebertaModel" | "DebertaV2Model" => AutoModel::DebertaV2(DebertaV2Model::load(cfg, weights)?),
            "DebertaForMaskedLM" | "DebertaV2ForMaskedLM" => {
                AutoModel::DebertaV2ForMaskedLM(DebertaV2ForMaskedLM::load(cfg, weights)?)
            }
            "DebertaForSequenceClassification" | "DebertaV2ForSequenceClassification" => {
                AutoModel::SequenceClassifier(SequenceClassifier::load_deberta_v2(cfg, weights)?)
            }
            "AlbertModel" => AutoModel::Bert(load_albert(cfg, weights)?),
            "AlbertForMaskedLM" => AutoModel::AlbertForMaskedLM(AlbertForMaskedLM::load(cfg, weights)?),
            _ if pretraining::ARCHITECTURES.contains(&arch) => {
                AutoModel::PreTraining(PreTraining::load(arch, cfg, weights)?)
            }
            "AlbertForSequenceClassification" => {
                AutoModel::SequenceClassifier(SequenceClassifier::load_albert(cfg, weights)?)
            }
            "ElectraForPreTraining" => {
                AutoModel::ElectraWithHead(ElectraWithHead::load_pretraining(cfg, weights)?)
            }
            "ElectraForMaskedLM" => {
                AutoModel::ElectraWithHead(ElectraWithHead::load_masked_lm(cfg, weights)?)
            }
            "ElectraForSequenceClassification" => {
                AutoModel::SequenceClassifier(SequenceClassifier::load_electra(cfg, weights)?)
            }
            "MPNetModel" => AutoModel::MPNet(MPNetModel::load(cfg, weights)?),
            "MPNetForMaskedLM" => AutoModel::MPNetForMaskedLM(MPNetForMaskedLM::load(cfg, weights)?),
            "ModernBertModel" => AutoModel::ModernBert(ModernBertModel::load(cfg, weights)?),
            "ModernBertForMaskedLM" => {
                AutoModel::ModernBertForMaskedLM(ModernBertForMaskedLM::load(cfg, weights)?)
            }
            "RobertaForMaskedLM" | "XLMRobertaForMaskedLM" | "CamembertForMaskedLM" => {
                AutoModel::RobertaForMaskedLM(RobertaForMaskedLM::load(cfg, weights)?)
            }
            "BertForSequenceClassification" => {
                AutoModel::SequenceClassifier(SequenceClassifier::load_bert(cfg, weights)?)
            }
            "RobertaForSequenceClassification"
            | "XLMRobertaForSequenceClassification"
            | "CamembertForSequenceClassification" => {
                AutoModel::SequenceClassifier(SequenceClassifier::load_roberta(cfg, weights)?)
            }
            "DistilBertForSequenceClassification" => {
                AutoModel::SequenceClassifier(SequenceClassifier::load_distilbert(cfg, weights)?)
            }
            _ if arch.ends_with("ForMultipleChoice") => {
                AutoModel::SequenceClassifier(multiple_choice::load(arch, cfg, weights)?)
            }
            // (Before the token classifiers' table: T5's is its own.)
            _ if ["T5", "MT5", "UMT5"].iter().any(|f| arch.starts_with(f)) => {
                AutoModel::T5(T5::load(arch, cfg, weights)?)
            }
            _ if DECODER_TOKEN_CLASSIFIERS.contains(&arch) => {
                let lm = Self::load_decoder_base(arch, "ForTokenClassification", cfg, weights)?;
                let family = arch.trim_end_matches("ForTokenClassification");
                AutoModel::DecoderTokenClassifier(DecoderForTokenClassification::load(
                    family, lm, cfg, weights,
                )?)
            }
            _ if arch.ends_with("ForTokenClassification") || arch.ends_with("ForQuestionAnswering") => {
                AutoModel::TokenClassifier(TokenClassifier::load(arch, cfg, weights)?)
            }
            "MPNetForSequenceClassification" => {
                AutoModel::SequenceClassifier(SequenceClassifier::load_mpnet(cfg, weights)?)
            }
            "ModernBertForSequenceClassification" => {
                AutoModel::SequenceClassifier(SequenceClassifier::load_modernbert(cfg, weights)?)
            }
            "ViTModel" => AutoModel::ViT(ViTModel::load(cfg, weights)?),
            // (ViT-MSN's base model has no pooler, which its checkpoints then lack.)
            "ViTMSNModel" => AutoModel::ViT(ViTModel::load(&msn_config(cfg), weights)?.without_pooler()),
            "IJepaModel" => AutoModel::ViT(ViTModel::load_ijepa(cfg, weights)?),
            "ViTMAEModel" | "ViTMAEForPreTraining" => AutoModel::ViTMae(ViTMae::load(arch, cfg, weights)?),
            "IJepaForImageClassification" => {
                AutoModel::ViTForImageClassification(ViTForImageClassification::load_ijepa(cfg, weights)?)
            }
            "DeiTModel" => AutoModel::ViT(ViTModel::load_deit(cfg, weights)?),
            "DeiTForImageClassification" | "DeiTForImageClassificationWithTeacher" => {
                let teacher = arch.ends_with("WithTeacher");
                AutoModel::ViTForImageClassification(ViTForImageClassification::load_deit(
                    cfg, weights, teacher,
                )?)
            }
            "MambaForCausalLM"
            | "MambaModel"
            | "FalconMambaForCausalLM"
            | "FalconMambaModel"
            | "Mamba2ForCausalLM"
            | "Mamba2Model" => AutoModel::Mamba(Mamba::load(arch, cfg, weights)?),
            _ if arch.starts_with("CLIP") => AutoModel::Clip(Clip::load(arch, cfg, weights)?),
            _ if arch.starts_with("Whisper") => AutoModel::Whisper(Whisper::load(arch, cfg, weights)?),
            "ConvNextModel"
            | "ConvNextForImageClassification"
            | "ConvNextV2Model"
            | "ConvNextV2ForImageClassification" => AutoModel::ConvNext(ConvNext::load(arch, cfg, weights)?),
            "SwinModel" | "SwinForImageClassification" | "Swinv2Model" | "Swinv2ForImageClassification" => {
                AutoModel::Swin(Swin::load(arch, cfg, weights)?)
            }
            "DINOv3ViTModel" => AutoModel::Dinov3Vit(Dinov3Vit::load(cfg, weights)?),
            "DepthAnythingForDepthEstimation" => AutoModel::DepthAnything(DepthAnything::load(cfg, weights)?),
            "MobileNetV1Model"
            | "MobileNetV1ForImageClassification"
            | "MobileNetV2Model"
            | "MobileNetV2ForImageClassification"
            | "MobileNetV2ForSemanticSegmentation" => {
                AutoModel::MobileNet(MobileNet::load(arch, cfg, weights)?)
            }
            "CvtModel" | "CvtForImageClassification" => AutoModel::Cvt(Cvt::load(arch, cfg, weights)?),
            "PvtV2Model" | "PvtV2ForImageClassification" => {
                AutoModel::Segformer(pvt_v2::load(arch, cfg, weights)?)
            }
            "YolosModel" | "YolosForObjectDetection" => AutoModel::Yolos(Yolos::load(arch, cfg, weights)?),
            "LevitModel" | "LevitForImageClassification" | "LevitForImageClassificationWithTeacher" => {
                AutoModel::Levit(Levit::load(arch, cfg, weights)?)
            }
            "MobileViTV2Model"
            | "MobileViTV2ForImageClassification"
            | "MobileViTV2ForSemanticSegmentation" => {
                AutoModel::MobileVit(mobilevit_v2::load(arch, cfg, weights)?)
            }
            "MobileViTModel" | "MobileViTForImageClassification" | "MobileViTForSemanticSegmentation" => {
                AutoModel::MobileVit(MobileVit::load(arch, cfg, weights)?)
            }
            "PoolFormerModel" | "PoolFormerForImageClassification" => {
                AutoModel::PoolFormer(PoolFormer::load(arch, cfg, weights)?)
            }
            "BitModel" | "BitForImageClassification" => AutoModel::Bit(Bit::load(arch, cfg, weights)?),
            "GLPNModel" | "GLPNForDepthEstimation" => AutoModel::Glpn(Glpn::load(arch, cfg, weights)?),
            "RegNetModel" | "RegNetForImageClassification" => {
                AutoModel::RegNet(RegNet::load(arch, cfg, weights)?)
            }
            "EfficientNetModel" | "EfficientNetForImageClassification" => {
                AutoModel::EfficientNet(EfficientNet::load(arch, cfg, weights)?)
            }
            "DPTModel" | "DPTForDepthEstimation" | "DPTForSemanticSegmentation" => {
                AutoModel::Dpt(Dpt::load(arch, cfg, weights)?)
            }
            "SegformerModel" | "SegformerForImageClassification" | "SegformerForSemanticSegmentation" => {
                AutoModel::Segformer(Segformer::load(arch, cfg, weights)?)
            }
            "BeitModel"
            | "BeitForImageClassification"
            | "Data2VecVisionModel"
            | "Data2VecVisionForImageClassification" => AutoModel::Beit(Beit::load(arch, cfg, weights)?),
            "ASTModel" | "ASTForAudioClassification" => {
                AutoModel::AudioSpectrogram(AudioSpectrogramTransformer::load(arch, cfg, weights)?)
            }
            "ResNetModel" | "ResNetForImageClassification" => {
                AutoModel::ResNet(ResNet::load(arch, cfg, weights)?)
            }
            _ if ["Wav2Vec2", "Hubert", "Data2VecAudio", "UniSpeech", "WavLM", "SEW"]
                .iter()
                .any(|f| arch.starts_with(f)) =>
            {
                AutoModel::Wav2Vec2(Wav2Vec2::load(arch, cfg, weights)?)
            }
            _ if arch.starts_with("Siglip") => AutoModel::Siglip(Siglip::load(arch, cfg, weights)?),
            "Dinov2Model" | "Dinov2WithRegistersModel" => AutoModel::Dinov2(Dinov2Model::load(cfg, weights)?),
            "Dinov2ForImageClassification" | "Dinov2WithRegistersForImageClassification" => {
                AutoModel::Dinov2ForImageClassification(Dinov2ForImageClassification::load(cfg, weights)?)
            }
            _ if ["Bart", "MBart", "Marian", "Pegasus", "M2M100", "PLBart", "Blenderbot"]
                .iter()
                .any(|f| arch.starts_with(f)) =>
            {
                AutoModel::Bart(Bart::load(arch, cfg, weights)?)
            }
            "ViTForImageClassification" => {
                AutoModel::ViTForImageClassification(ViTForImageClassification::load(cfg, weights)?)
            }
            "ViTMSNForImageClassification" => AutoModel::ViTForImageClassification(
                ViTForImageClassification::load(&msn_config(cfg), weights)?,
            ),
            "GemmaForCausalLM" => AutoModel::Gemma(GemmaForCausalLM::load(cfg, weights)?),
            "Gemma2ForCausalLM" => AutoModel::Gemma2(Gemma2ForCausalLM::load(cfg, weights)?),
            // (`gemma3_text` configs naming `Gemma3ForConditionalGeneration` may come with the
            // multimodal checkpoint's tensor names.)
            "Gemma3ForCausalLM" => {
                AutoModel::Gemma3(Gemma3ForCausalLM(gemma3_multimodal::load_text_model(cfg, weights)?))
            }
            "Gemma3nForConditionalGeneration" => AutoModel::Gemma3nForConditionalGeneration(
                Gemma3nForConditionalGeneration::load(cfg, weights)?,
            ),
            "Gemma4ForConditionalGeneration" => {
                AutoModel::Gemma4ForConditionalGeneration(Gemma4ForConditionalGeneration::load(cfg, weights)?)
            }
            "Llama4ForConditionalGeneration" => {
                AutoModel::Llama4ForConditionalGeneration(Llama4ForConditionalGeneration::load(cfg, weights)?)
            }
            arch if vision_language::is_vision_language(arch) => {
                AutoModel::VisionLanguage(VisionLanguageForConditionalGeneration::load(cfg, weights)?)
            }
            "Mistral3ForConditionalGeneration" => {
                // (With its vision tower, a Mistral 3 checkpoint takes images too.)
                let m = Mistral3ForConditionalGeneration::load(cfg, weights)?;
                let arch = "Mistral3ForConditionalGeneration";
                match VisionLanguageForConditionalGeneration::with_images_of(m.0.clone(), arch, cfg, weights)?
                {
                    Some(with_images) => AutoModel::VisionLanguage(with_images),
                    None => AutoModel::Mistral3ForConditionalGeneration(m),
                }
            }
            "Gemma3ForConditionalGeneration" => {
                AutoModel::Gemma3ForConditionalGeneration(Gemma3ForConditionalGeneration::load(cfg, weights)?)
            }
            "LlamaForCausalLM" => AutoModel::Llama(LlamaForCausalLM::load(cfg, weights)?),
            "Phi3ForCausalLM" => AutoModel::Phi3(Phi3ForCausalLM::load(cfg, weights)?),
            "GPT2LMHeadModel" => AutoModel::Gpt2(GPT2LMHeadModel::load(cfg, weights)?),
            "GPTNeoXForCausalLM" => AutoModel::GptNeoX(GPTNeoXForCausalLM::load(cfg, weights)?),
            "FalconForCausalLM" => AutoModel::Falcon(FalconForCausalLM::load(cfg, weights)?),
            "OlmoForCausalLM" => AutoModel::Olmo(OlmoForCausalLM::load(cfg, weights)?),
            "Olmo2ForCausalLM" => AutoModel::Olmo2(Olmo2ForCausalLM::load(cfg, weights)?),
            "Olmo3ForCausalLM" => AutoModel::Olmo3(Olmo3ForCausalLM::load(cfg, weights)?),
            "GraniteForCausalLM" => AutoModel::Granite(GraniteForCausalLM::load(cfg, weights)?),
            "SmolLM3ForCausalLM" => AutoModel::SmolLM3(SmolLM3ForCausalLM::load(cfg, weights)?),
            "CohereForCausalLM" => AutoModel::Cohere(CohereForCausalLM::load(cfg, weights)?),
            "OPTForCausalLM" => AutoModel::Opt(OPTForCausalLM::load(cfg, weights)?),
            "GPTJForCausalLM" => AutoModel::GptJ(GPTJForCausalLM::load(cfg, weights)?),
            "GPTNeoForCausalLM" => AutoModel::GptNeo(GPTNeoForCausalLM::load(cfg, weights)?),
            "BloomForCausalLM" => AutoModel::Bloom(BloomForCausalLM::load(cfg, weights)?),
            "CodeGenForCausalLM" => AutoModel::GptJ(codegen::load(cfg, weights)?),
            "MptForCausalLM" => AutoModel::Mpt(MptForCausalLM::load(cfg, weights)?),
            "OlmoeForCausalLM" => AutoModel::Olmoe(OlmoeForCausalLM::load(cfg, weights)?),
            "GraniteMoeForCausalLM" => AutoModel::GraniteMoe(GraniteMoeForCausalLM::load(cfg, weights)?),
            "NemotronForCausalLM" => AutoModel::Nemotron(NemotronForCausalLM::load(cfg, weights)?),
            "BioGptForCausalLM" => AutoModel::BioGpt(BioGptForCausalLM::load(cfg, weights)?),
            "XGLMForCausalLM" => AutoModel::Xglm(XGLMForCausalLM::load(cfg, weights)?),
            "ArceeForCausalLM" => AutoModel::Arcee(ArceeForCausalLM::load(cfg, weights)?),
            "Ernie4_5ForCausalLM" => AutoModel::Ernie4_5(Ernie4_5ForCausalLM::load(cfg, weights)?),
            "DeepseekV2ForCausalLM" => AutoModel::DeepseekV2(DeepseekV2ForCausalLM::load(cfg, weights)?),
            "DeepseekV3ForCausalLM" => AutoModel::DeepseekV3(DeepseekV3ForCausalLM::load(cfg, weights)?),
            "GptOssForCausalLM" => AutoModel::GptOss(GptOssForCausalLM::load(cfg, weights)?),
            "Glm4MoeForCausalLM" => AutoModel::Glm4Moe(Glm4MoeForCausalLM::load(cfg, weights)?),
            "Dots1ForCausalLM" => AutoModel::Dots1(Dots1ForCausalLM::load(cfg, weights)?),
            "ApertusForCausalLM" => AutoModel::Apertus(ApertusForCausalLM::load(cfg, weights)?),
            "BambaForCausalLM" => AutoModel::Bamba(BambaForCausalLM::load(cfg, weights)?),
            "Lfm2ForCausalLM" => AutoModel::Lfm2(Lfm2ForCausalLM::load(cfg, weights)?),
            "Lfm2MoeForCausalLM" => AutoModel::Lfm2Moe(Lfm2MoeForCausalLM::load(cfg, weights)?),
            "JambaForCausalLM" => AutoModel::Jamba(JambaForCausalLM::load(cfg, weights)?),
            "NemotronHForCausalLM" => AutoModel::NemotronH(NemotronHForCausalLM::load(cfg, weights)?),
            "Qwen3_5ForCausalLM" => AutoModel::Qwen3_5(Qwen3_5ForCausalLM::load(cfg, weights)?),
            "Qwen3NextForCausalLM" => AutoModel::Qwen3Next(Qwen3NextForCausalLM::load(cfg, weights)?),
            "HunYuanMoEV1ForCausalLM" => AutoModel::HunYuanMoe(HunYuanMoEV1ForCausalLM::load(cfg, weights)?),
            "PhimoeForCausalLM" => AutoModel::Phimoe(PhimoeForCausalLM::load(cfg, weights)?),
            "FalconH1ForCausalLM" => AutoModel::FalconH1(FalconH1ForCausalLM::load(cfg, weights)?),
            "ExaoneMoeForCausalLM" => AutoModel::ExaoneMoe(ExaoneMoeForCausalLM::load(cfg, weights)?),
            "ExaoneForCausalLM" => AutoModel::Exaone(ExaoneForCausalLM::load(cfg, weights)?),
            "InternLM3ForCausalLM" => AutoModel::InternLM3(InternLM3ForCausalLM::load(cfg, weights)?),
            "IQuestCoderForCausalLM" => AutoModel::IQuestCoder(IQuestCoderForCausalLM::load(cfg, weights)?),
            "OpenAIGPTLMHeadModel" => AutoModel::OpenAIGPT(OpenAIGPTLMHeadModel::load(cfg, weights)?),
            "MiniMaxM2ForCausalLM" => AutoModel::MiniMaxM2(MiniMaxM2ForCausalLM::load(cfg, weights)?),
            "Glm4MoeLiteForCausalLM" => AutoModel::Glm4MoeLite(Glm4MoeLiteForCausalLM::load(cfg, weights)?),
            "NanoChatForCausalLM" => AutoModel::NanoChat(NanoChatForCausalLM::load(cfg, weights)?),
            "SarvamMLAForCausalLM" => AutoModel::SarvamMLA(SarvamMLAForCausalLM::load(cfg, weights)?),
            "SarvamMoEForCausalLM" => AutoModel::SarvamMoE(SarvamMoEForCausalLM::load(cfg, weights)?),
            "CwmForCausalLM" => AutoModel::Cwm(CwmForCausalLM::load(cfg, weights)?),
            "HyperCLOVAXForCausalLM" => AutoModel::HyperCLOVAX(HyperCLOVAXForCausalLM::load(cfg, weights)?),
            "Jais2ForCausalLM" => AutoModel::Jais2(Jais2ForCausalLM::load(cfg, weights)?),
            "SolarOpenForCausalLM" => AutoModel::SolarOpen(SolarOpenForCausalLM::load(cfg, weights)?),
            "YoutuForCausalLM" => AutoModel::Youtu(YoutuForCausalLM::load(cfg, weights)?),
            "EuroBertForMaskedLM" => AutoModel::EuroBert(EuroBertForMaskedLM::load(cfg, weights)?),
            "ModernBertDecoderForCausalLM" => {
                AutoModel::ModernBertDecoder(ModernBertDecoderForCausalLM::load(cfg, weights)?)
            }
            "BitNetForCausalLM" => AutoModel::BitNet(BitNetForCausalLM::load(cfg, weights)?),
            "DiffLlamaForCausalLM" => AutoModel::DiffLlama(DiffLlamaForCausalLM::load(cfg, weights)?),
            "Lfm3ForCausalLM" => AutoModel::Lfm3(Lfm3ForCausalLM::load(cfg, weights)?),
            "Kolibri1ForCausalLM" => AutoModel::Kolibri1(Kolibri1ForCausalLM::load(cfg, weights)?),
            "AXK1ForCausalLM" => AutoModel::AXK1(AXK1ForCausalLM::load(cfg, weights)?),
            "FlintForCausalLM" => AutoModel::Flint(FlintForCausalLM::load(cfg, weights)?),
            "Mistral4ForCausalLM" => AutoModel::Mistral4(Mistral4ForCausalLM::load(cfg, weights)?),
            "Gemma3nForCausalLM" => AutoModel::Gemma3n(Gemma3nForCausalLM::load(cfg, weights)?),
            "Gemma4ForCausalLM" => AutoModel::Gemma4(Gemma4ForCausalLM::load(cfg, weights)?),
            "MiMoV2FlashForCausalLM" => AutoModel::MiMoV2Flash(MiMoV2FlashForCausalLM::load(cfg, weights)?),
            "PersimmonForCausalLM" => AutoModel::Persimmon(PersimmonForCausalLM::load(cfg, weights)?),
            "FuyuForCausalLM" => AutoModel::Fuyu(FuyuForCausalLM::load(cfg, weights)?),
            "DbrxForCausalLM" => AutoModel::Dbrx(DbrxForCausalLM::load(cfg, weights)?),
            "MiniCPM3ForCausalLM" => AutoModel::MiniCPM3(MiniCPM3ForCausalLM::load(cfg, weights)?),
            "GraniteSWAForCausalLM" => AutoModel::GraniteSWA(GraniteSWAForCausalLM::load(cfg, weights)?),
            "GraniteMoeSWAForCausalLM" => {
                AutoModel::GraniteMoeSWA(GraniteMoeSWAForCausalLM::load(cfg, weights)?)
            }
            "Cohere2MoeForCausalLM" => AutoModel::Cohere2Moe(Cohere2MoeForCausalLM::load(cfg, weights)?),
            "HYV3ForCausalLM" => AutoModel::HYV3(HYV3ForCausalLM::load(cfg, weights)?),
            "Llama4ForCausalLM" => AutoModel::Llama4(Llama4ForCausalLM::load(cfg, weights)?),
            "AfmoeForCausalLM" => AutoModel::Afmoe(AfmoeForCausalLM::load(cfg, weights)?),
            "LagunaForCausalLM" => AutoModel::Laguna(LagunaForCausalLM::load(cfg, weights)?),
            "MellumForCausalLM" => AutoModel::Mellum(MellumForCausalLM::load(cfg, weights)?),
            "Qwen3_5MoeForCausalLM" => AutoModel::Qwen3_5Moe(Qwen3_5MoeForCausalLM::load(cfg, weights)?),
            "Qwen3_5MoeForConditionalGeneration" => {
                AutoModel::Qwen3_5Moe(Qwen3_5MoeForCausalLM::load_multimodal(cfg, weights)?)
            }
            "Qwen3_5ForConditionalGeneration" => {
                AutoModel::Qwen3_5(Qwen3_5ForCausalLM::load_multimodal(cfg, weights)?)
            }
            "GraniteMoeSharedForCausalLM" => {
                AutoModel::GraniteMoe(GraniteMoeForCausalLM::load_shared(cfg, weights)?)
            }
            "GraniteMoeHybridForCausalLM" => {
                AutoModel::GraniteMoe(GraniteMoeForCausalLM::load_hybrid(cfg, weights)?)
            }
            "HunYuanDenseV1ForCausalLM" => {
                AutoModel::HunYuanDense(HunYuanDenseV1ForCausalLM::load(cfg, weights)?)
            }
            "VaultGemmaForCausalLM" => AutoModel::VaultGemma(VaultGemmaForCausalLM::load(cfg, weights)?),
            "FlexOlmoForCausalLM" => AutoModel::FlexOlmo(FlexOlmoForCausalLM::load(cfg, weights)?),
            "Ernie4_5_MoeForCausalLM" => AutoModel::Ernie4_5Moe(Ernie4_5MoeForCausalLM::load(cfg, weights)?),
            "MinistralForCausalLM" => AutoModel::Ministral(MinistralForCausalLM::load(cfg, weights)?),
            "Ministral3ForCausalLM" => AutoModel::Ministral3(Ministral3ForCausalLM::load(cfg, weights)?),
            "SeedOssForCausalLM" => AutoModel::SeedOss(SeedOssForCausalLM::load(cfg, weights)?),
            "HeliumForCausalLM" => AutoModel::Helium(HeliumForCausalLM::load(cfg, weights)?),
            "Exaone4ForCausalLM" => AutoModel::Exaone4(Exaone4ForCausalLM::load(cfg, weights)?),
            "GlmForCausalLM" => AutoModel::Glm(GlmForCausalLM::load(cfg, weights, false)?),
            "Glm4ForCausalLM" => AutoModel::Glm(GlmForCausalLM::load(cfg, weights, true)?),
            "GPTBigCodeForCausalLM" => AutoModel::GptBigCode(GPTBigCodeForCausalLM::load(cfg, weights)?),
            "StableLmForCausalLM" => AutoModel::StableLm(StableLmForCausalLM::load(cfg, weights)?),
            "Cohere2ForCausalLM" => AutoModel::Cohere2(Cohere2ForCausalLM::load(cfg, weights)?),
            "MixtralForCausalLM" => AutoModel::Mixtral(MixtralForCausalLM::load(cfg, weights)?),
            "Qwen3MoeForCausalLM" => AutoModel::Qwen3Moe(Qwen3MoeForCausalLM::load(cfg, weights)?),
            "Qwen2MoeForCausalLM" => AutoModel::Qwen2Moe(Qwen2MoeForCausalLM::load(cfg, weights)?),
            "Starcoder2ForCausalLM" => AutoModel::Starcoder2(Starcoder2ForCausalLM::load(cfg, weights)?),
            "PhiForCausalLM" => AutoModel::Phi(PhiForCausalLM::load(cfg, weights)?),
            "MistralForCausalLM" => AutoModel::Mistral(MistralForCausalLM::load(cfg, weights)?),
            "Qwen2ForCausalLM" => AutoModel::Qwen2(Qwen2ForCausalLM::load(cfg, weights)?),
            "Qwen3ForCausalLM" => AutoModel::Qwen3(Qwen3ForCausalLM::load(cfg, weights)?),
            "LlamaModel"
            | "MistralModel"
            | "Qwen2Model"
            | "Qwen3Model"
            | "GemmaModel"
            | "Gemma2Model"
            | "Gemma3TextModel"
            | "Phi3Model"
            | "GPT2Model"
            | "GPTNeoXModel"
            | "MixtralModel"
            | "Qwen3MoeModel"
            | "PhiModel"
            | "Qwen2MoeModel"
            | "Starcoder2Model"
            | "FalconModel"
            | "OlmoModel"
            | "Olmo2Model"
            | "Olmo3Model"
            | "GraniteModel"
            | "SmolLM3Model"
            | "CohereModel"
            | "Cohere2Model"
            | "OPTModel"
            | "GPTJModel"
            | "GPTNeoModel"
            | "BloomModel"
            | "GPTBigCodeModel"
            | "MptModel"
            | "CodeGenModel"
            | "OlmoeModel"
            | "GraniteMoeModel"
            | "NemotronModel"
            | "GlmModel"
            | "Glm4Model"
            | "BioGptModel"
            | "XGLMModel"
            | "ArceeModel"
            | "Ernie4_5Model"
            | "StableLmModel"
            | "DeepseekV2Model"
            | "DeepseekV3Model"
            | "GptOssModel"
            | "Glm4MoeModel"
            | "Dots1Model"
            | "MinistralModel"
            | "SeedOssModel"
            | "HeliumModel"
            | "Exaone4Model"
            | "Ernie4_5_MoeModel"
            | "FlexOlmoModel"
            | "VaultGemmaModel"
            | "HunYuanDenseV1Model"
            | "GraniteMoeSharedModel"
            | "GraniteMoeHybridModel"
            | "BambaModel"
            | "Lfm2Model"
            | "Lfm2MoeModel"
            | "JambaModel"
            | "NemotronHModel"
            | "Qwen3_5TextModel"
            | "Qwen3NextModel"
            | "HunYuanMoEV1Model"
            | "PhimoeModel"
            | "FalconH1Model"
            | "ExaoneMoeModel"
            | "ExaoneModel"
            | "InternLM3Model"
            | "IQuestCoderModel"
            | "OpenAIGPTModel"
            | "MiniMaxM2Model"
            | "Glm4MoeLiteModel"
            | "NanoChatModel"
            | "SarvamMLAModel"
            | "SarvamMoEModel"
            | "Ministral3Model"
            | "CwmModel"
            | "HyperCLOVAXModel"
            | "Jais2Model"
            | "SolarOpenModel"
            | "YoutuModel"
            | "EuroBertModel"
            | "ModernBertDecoderModel"
            | "BitNetModel"
            | "DiffLlamaModel"
            | "Lfm3Model"
            | "Kolibri1Model"
            | "AXK1Model"
            | "FlintModel"
            | "Mistral4Model"
            | "Gemma3nTextModel"
            | "Gemma4TextModel"
            | "MiMoV2FlashModel"
            | "PersimmonModel"
            | "DbrxModel"
            | "MiniCPM3Model"
            | "GraniteSWAModel"
            | "GraniteMoeSWAModel"
            | "Cohere2MoeModel"
            | "HYV3Model"
            | "Llama4TextModel"
            | "AfmoeModel"
            | "LagunaModel"
            | "MellumModel"
            | "Qwen3_5MoeTextModel"
            | "ApertusModel" => {
                // The model type's causal LM, whose forward stops at the final norm here.
                let model_type = cfg.model_type()?;
                let causal = MODEL_TYPES.iter().find(|(t, _)| *t == model_type).map(|(_, a)| *a);
                let lm = match causal {
                    Some(causal) if causal != arch => Self::load_architecture(causal, cfg, weights)?,
                    _ => {
                        return Err(Error::Unsupported(format!(
                            "architecture \"{arch}\" with model_type \"{model_type}\""
                        )))
                    }
                };
                match lm.causal_lm() {
                    Some(lm) => AutoModel::BaseDecoder(lm.clone()),
                    None => {
                        return Err(Error::Unsupported(format!(
                            "architecture \"{arch}\" with model_type \"{model_type}\" (not a decoder)"
                        )))
                    }
                }
            }
            "LlamaForSequenceClassification"
            | "MistralForSequenceClassification"
            | "Qwen2ForSequenceClassification"
            | "Qwen3ForSequenceClassification"
            | "GemmaForSequenceClassification"
            | "Gemma2ForSequenceClassification"
            | "Phi3ForSequenceClassification"
            | "GPT2ForSequenceClassification"
            | "GPTNeoXForSequenceClassification"
            | "MixtralForSequenceClassification"
            | "Qwen3MoeForSequenceClassification"
            | "PhiForSequenceClassification"
            | "Qwen2MoeForSequenceClassification"
            | "Starcoder2ForSequenceClassification"
            | "FalconForSequenceClassification"
            | "OlmoForSequenceClassification"
            | "Olmo2ForSequenceClassification"
            | "Olmo3ForSequenceClassification"
            | "SmolLM3ForSequenceClassification"
            | "OPTForSequenceClassification"
            | "GPTJForSequenceClassification"
            | "GPTNeoForSequenceClassification"
            | "BloomForSequenceClassification"
            | "GPTBigCodeForSequenceClassification"
            | "MptForSequenceClassification"
            | "NemotronForSequenceClassification"
            | "GlmForSequenceClassification"
            | "Glm4ForSequenceClassification"
            | "BioGptForSequenceClassification"
            | "ArceeForSequenceClassification"
            | "DeepseekV2ForSequenceClassification"
            | "DeepseekV3ForSequenceClassification"
            | "Mistral4ForSequenceClassification"
            | "AXK1ForSequenceClassification"
            | "DiffLlamaForSequenceClassification"
            | "GptOssForSequenceClassification"
            | "HunYuanDenseV1ForSequenceClassification"
            | "MinistralForSequenceClassification"
            | "OpenAIGPTForSequenceClassification"
            | "Ministral3ForSequenceClassification"
            | "SeedOssForSequenceClassification"
            | "HeliumForSequenceClassification"
            | "MiniCPM3ForSequenceClassification"
            | "PersimmonForSequenceClassification"
            | "Exaone4ForSequenceClassification"
            | "JambaForSequenceClassification"
            | "PhimoeForSequenceClassification"
            | "StableLmForSequenceClassification" => {
                let lm = Self::load_decoder_base(arch, "ForSequenceClassification", cfg, weights)?;
                AutoModel::DecoderClassifier(DecoderForSequenceClassification::load(lm, cfg, weights)?)
            }
            "EuroBertForSequenceClassification" => {
                let lm = Self::load_decoder_base(arch, "ForSequenceClassification", cfg, weights)?;
                AutoModel::DecoderClassifier(DecoderForSequenceClassification::load_eurobert(
                    lm, cfg, weights,
                )?)
            }
            "ModernBertDecoderForSequenceClassification" => {
                let weights = super::modernbert_decoder::classifier_weights(weights);
                let lm = Self::load_decoder_base(arch, "ForSequenceClassification", cfg, &weights)?;
                AutoModel::DecoderClassifier(DecoderForSequenceClassification::load(lm, cfg, &weights)?)
            }
            other => unreachable!("architecture_of accepted {other}"),
        })
    }

    /// The decoder under a classifier head `arch` (`{family}{head}`): the family's base model read
    /// from the checkpoint's `model.*` (GPT-2's `transformer.*`, GPT-NeoX's `gpt_neox.*`, BioGPT's
    /// `biogpt.*`), without an LM head.
    fn load_decoder_base(arch: &str, head: &str, cfg: &Config, weights: &Weights) -> Result<CausalLm> {
        let family = arch.trim_end_matches(head);
        let prefix = match family {
            "GPT2" | "GPTJ" | "GPTNeo" | "Bloom" | "GPTBigCode" | "Mpt" | "Falcon" | "OpenAIGPT" => {
                "transformer."
            }
            "GPTNeoX" => "gpt_neox.",
            "BioGpt" => "biogpt.",
            _ => "model.",
        };
        let base = weights.renamed(|n| n.strip_prefix(prefix).map(str::to_string));
        let base_arch = format!("{family}Model");
        match Self::load_architecture(&base_arch, cfg, &base)? {
            AutoModel::BaseDecoder(lm) => Ok(lm),
            _ => unreachable!("{base_arch} is a decoder's base model"),
        }
    }
}

/// ViT-MSN's config as ViT's: its own `layer_norm_eps` default (1e-6, ViT's being 1e-12).
fn msn_config(cfg: &Config) -> Config {
    let mut json = cfg.json().clone();
    json.entry("layer_norm_eps").or_insert_with(|| serde_json::Value::from(1e-6));
    Config::from_map(json)
}
