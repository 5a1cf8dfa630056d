//! [`AutoModel`]'s parts: the encoder or decoder inside each kind of model, its device, and what
//! its positions and padding allow.

use super::*;

impl AutoModel {
    /// The BERT-style encoder inside a BERT, RoBERTa, XLM-R, DistilBERT, MPNet or ELECTRA model (`None` for
    /// ModernBERT and the decoders).
    pub fn encoder(&self) -> Option<&BertModel> {
        match self {
            AutoModel::Bert(m) => Some(m),
            AutoModel::BertForMaskedLM(m) => Some(&m.bert),
            AutoModel::DistilBert(m) => Some(&m.0),
            AutoModel::DistilBertForMaskedLM(m) => Some(&m.distilbert.0),
            AutoModel::Roberta(m) => Some(&m.0),
            AutoModel::MPNet(m) => Some(&m.0),
            AutoModel::MPNetForMaskedLM(m) => Some(&m.mpnet.0),
            AutoModel::RobertaForMaskedLM(m) => Some(&m.roberta.0),
            AutoModel::ElectraWithHead(m) => Some(&m.electra),
            AutoModel::AlbertForMaskedLM(m) => Some(&m.albert),
            AutoModel::SequenceClassifier(m) => m.encoder.bert(),
            AutoModel::TokenClassifier(m) => m.encoder.bert(),
            AutoModel::PreTraining(m) => Some(&m.encoder),
            _ => None,
        }
    }

    /// The size of a learned position table (encoders, GPT-2); rotary positions have none.
    pub(crate) fn max_positions(&self) -> Option<usize> {
        if let Some(lm) = self.decoder() {
            return lm.position_table_len();
        }
        if let Some(deberta) = self.deberta() {
            return deberta.max_positions();
        }
        let enc = self.encoder()?;
        // RoBERTa's positions start after its padding id.
        let skipped = match enc.positions() {
            Positions::AfterPadding { padding_idx } => padding_idx.max(0) as usize + 1,
            Positions::Absolute => 0,
        };
        Some(enc.config().max_positions.saturating_sub(skipped))
    }

    /// The token id padding slots get: RoBERTa's padding id (its positions skip it), else 0.
    pub(crate) fn padding_token(&self) -> i64 {
        match self.encoder().map(BertModel::positions) {
            Some(Positions::AfterPadding { padding_idx }) => padding_idx,
            _ => 0,
        }
    }

    /// The device of the weights, where the model runs.
    pub fn device(&self) -> Device {
        match self {
            AutoModel::Bert(m) => m.device(),
            AutoModel::BertForMaskedLM(m) => m.bert.device(),
            AutoModel::DistilBert(m) => m.device(),
            AutoModel::DistilBertForMaskedLM(m) => m.distilbert.device(),
            AutoModel::Roberta(m) => m.device(),
            AutoModel::MPNet(m) => m.device(),
            AutoModel::MPNetForMaskedLM(m) => m.mpnet.device(),
            AutoModel::ModernBert(m) => m.device(),
            AutoModel::ModernBertForMaskedLM(m) => m.model.device(),
            AutoModel::RobertaForMaskedLM(m) => m.roberta.device(),
            AutoModel::ElectraWithHead(m) => m.electra.device(),
            AutoModel::AlbertForMaskedLM(m) => m.albert.device(),
            AutoModel::DebertaV2(m) => m.device(),
            AutoModel::NomicBert(m) => m.device(),
            AutoModel::Esm(m) => m.device(),
            AutoModel::EsmForMaskedLM(m) => m.esm.device(),
            AutoModel::DebertaV2ForMaskedLM(m) => m.deberta.device(),
            AutoModel::SequenceClassifier(m) => m.encoder.device(),
            AutoModel::TokenClassifier(m) => m.encoder.device(),
            AutoModel::PreTraining(m) => m.encoder.device(),
            _ if self.runs_own_inputs() => self.own_device(),
            _ => self.decoder().expect("decoder variants").device(),
        }
    }

    /// The ModernBERT encoder inside, for its models.
    pub(super) fn modernbert(&self) -> Option<&ModernBertModel> {
        match self {
            AutoModel::ModernBert(m) => Some(m),
            AutoModel::ModernBertForMaskedLM(m) => Some(&m.model),
            AutoModel::SequenceClassifier(m) => m.encoder.modernbert(),
            AutoModel::TokenClassifier(m) => m.encoder.modernbert(),
            _ => None,
        }
    }

    /// The DeBERTa-v2 encoder inside, for its models.
    pub(super) fn deberta(&self) -> Option<&DebertaV2Model> {
        match self {
            AutoModel::DebertaV2(m) => Some(m),
            AutoModel::DebertaV2ForMaskedLM(m) => Some(&m.deberta),
            AutoModel::SequenceClassifier(m) => match &m.encoder {
                ClassifierEncoder::DebertaV2(e) => Some(e),
                _ => None,
            },
            AutoModel::TokenClassifier(m) => match &m.encoder {
                ClassifierEncoder::DebertaV2(e) => Some(e),
                _ => None,
            },
            _ => None,
        }
    }

    /// The decoder stack inside: a causal LM's, a base decoder, a decoder classifier's.
    pub(super) fn decoder(&self) -> Option<&CausalLm> {
        match self {
            AutoModel::DecoderClassifier(m) => Some(&m.model),
            AutoModel::DecoderTokenClassifier(m) => Some(&m.model),
            _ => self.causal_lm(),
        }
    }

    /// The decoder inside, for the causal LMs (and the decoders' base models).
    pub fn causal_lm(&self) -> Option<&CausalLm> {
        match self {
            AutoModel::Gemma(m) => Some(m),
            AutoModel::Gemma2(m) => Some(m),
            AutoModel::Gemma3(m) => Some(m),
            AutoModel::Gemma3ForConditionalGeneration(m) => Some(m),
            AutoModel::Mistral3ForConditionalGeneration(m) => Some(m),
            AutoModel::VisionLanguage(m) => Some(m),
            AutoModel::Llama4ForConditionalGeneration(m) => Some(m),
            AutoModel::Gemma4ForConditionalGeneration(m) => Some(m),
            AutoModel::Gemma3nForConditionalGeneration(m) => Some(m),
            AutoModel::Llama(m) => Some(m),
            AutoModel::Phi3(m) => Some(m),
            AutoModel::Gpt2(m) => Some(m),
            AutoModel::GptNeoX(m) => Some(m),
            AutoModel::Falcon(m) => Some(m),
            AutoModel::Olmo(m) => Some(m),
            AutoModel::Olmo2(m) => Some(m),
            AutoModel::Olmo3(m) => Some(m),
            AutoModel::Granite(m) => Some(m),
            AutoModel::SmolLM3(m) => Some(m),
            AutoModel::Cohere(m) => Some(m),
            AutoModel::Opt(m) => Some(m),
            AutoModel::GptJ(m) => Some(m),
            AutoModel::GptNeo(m) => Some(m),
            AutoModel::Bloom(m) => Some(m),
            AutoModel::GptBigCode(m) => Some(m),
            AutoModel::Mpt(m) => Some(m),
            AutoModel::Olmoe(m) => Some(m),
            AutoModel::GraniteMoe(m) => Some(m),
            AutoModel::Nemotron(m) => Some(m),
            AutoModel::Glm(m) => Some(m),
            AutoModel::BioGpt(m) => Some(m),
            AutoModel::Xglm(m) => Some(m),
            AutoModel::Arcee(m) => Some(m),
            AutoModel::Ernie4_5(m) => Some(m),
            AutoModel::DeepseekV2(m) => Some(m),
            AutoModel::DeepseekV3(m) => Some(m),
            AutoModel::GptOss(m) => Some(m),
            AutoModel::Glm4Moe(m) => Some(m),
            AutoModel::Dots1(m) => Some(m),
            AutoModel::Apertus(m) => Some(m),
            AutoModel::Bamba(m) => Some(m),
            AutoModel::Lfm2(m) => Some(m),
            AutoModel::Lfm2Moe(m) => Some(m),
            AutoModel::Jamba(m) => Some(m),
            AutoModel::NemotronH(m) => Some(m),
            AutoModel::Qwen3_5(m) => Some(m),
            AutoModel::Qwen3Next(m) => Some(m),
            AutoModel::Qwen3_5Moe(m) => Some(m),
            AutoModel::HunYuanMoe(m) => Some(m),
            AutoModel::Phimoe(m) => Some(m),
            AutoModel::FalconH1(m) => Some(m),
            AutoModel::ExaoneMoe(m) => Some(m),
            AutoModel::Exaone(m) => Some(m),
            AutoModel::InternLM3(m) => Some(m),
            AutoModel::IQuestCoder(m) => Some(m),
            AutoModel::OpenAIGPT(m) => Some(m),
            AutoModel::MiniMaxM2(m) => Some(m),
            AutoModel::Glm4MoeLite(m) => Some(m),
            AutoModel::NanoChat(m) => Some(m),
            AutoModel::SarvamMoE(m) => Some(m),
            AutoModel::SarvamMLA(m) => Some(m),
            AutoModel::Ministral3(m) => Some(m),
            AutoModel::Cwm(m) => Some(m),
            AutoModel::HyperCLOVAX(m) => Some(m),
            AutoModel::Jais2(m) => Some(m),
            AutoModel::SolarOpen(m) => Some(m),
            AutoModel::Youtu(m) => Some(m),
            AutoModel::EuroBert(m) => Some(m),
            AutoModel::ModernBertDecoder(m) => Some(m),
            AutoModel::BitNet(m) => Some(m),
            AutoModel::DiffLlama(m) => Some(m),
            AutoModel::Lfm3(m) => Some(m),
            AutoModel::Kolibri1(m) => Some(m),
            AutoModel::AXK1(m) => Some(m),
            AutoModel::Flint(m) => Some(m),
            AutoModel::Mistral4(m) => Some(m),
            AutoModel::Gemma3n(m) => Some(m),
            AutoModel::Gemma4(m) => Some(m),
            AutoModel::MiMoV2Flash(m) => Some(m),
            AutoModel::Persimmon(m) => Some(m),
            AutoModel::Fuyu(m) => Some(m),
            AutoModel::Dbrx(m) => Some(m),
            AutoModel::MiniCPM3(m) => Some(m),
            AutoModel::GraniteSWA(m) => Some(m),
            AutoModel::GraniteMoeSWA(m) => Some(m),
            AutoModel::Cohere2Moe(m) => Some(m),
            AutoModel::HYV3(m) => Some(m),
            AutoModel::Llama4(m) => Some(m),
            AutoModel::Afmoe(m) => Some(m),
            AutoModel::Laguna(m) => Some(m),
            AutoModel::Mellum(m) => Some(m),
            AutoModel::HunYuanDense(m) => Some(m),
            AutoModel::VaultGemma(m) => Some(m),
            AutoModel::FlexOlmo(m) => Some(m),
            AutoModel::Ernie4_5Moe(m) => Some(m),
            AutoModel::Ministral(m) => Some(m),
            AutoModel::SeedOss(m) => Some(m),
            AutoModel::Helium(m) => Some(m),
            AutoModel::Exaone4(m) => Some(m),
            AutoModel::StableLm(m) => Some(m),
            AutoModel::Cohere2(m) => Some(m),
            AutoModel::Mixtral(m) => Some(m),
            AutoModel::Qwen3Moe(m) => Some(m),
            AutoModel::Qwen2Moe(m) => Some(m),
            AutoModel::Starcoder2(m) => Some(m),
            AutoModel::Phi(m) => Some(m),
            AutoModel::Mistral(m) => Some(m),
            AutoModel::Qwen2(m) => Some(m),
            AutoModel::Qwen3(m) => Some(m),
            AutoModel::BaseDecoder(m) => Some(m),
            _ => None,
        }
    }
}
