"""Facts the section states about its sources and about real models, each read at the source
(:class:`~stats.claims.checks.DocumentaryCheck`): papers at a section, footnote, table or
algorithm, and configuration classes and code at a stated commit.

Every record was made in one reading session (December 2026) with the project's source tools;
``source_says`` paraphrases what was read, and ``read_via`` says when a paper's text was read
through a transcription or a quotation rather than the paper itself.  Nothing is fetched at
run time.  Statements whose sources could not be reached stay in
:data:`~stats.claims.unchecked.NOT_CHECKABLE` with that reason.
"""

from __future__ import annotations

import dataclasses
import math

from ..check_builders import Erratum, Stated, documentary, no, yes
from ..checks import PaperSource, RepoSource
from ..claim import Claim
from ..headings import ASSUMPTION, BACKWARD, OPENING, PYTORCH, READ_MORE, STABILITY, WIDTH

SECTION = WIDTH
#: The headings this module's claims cite, in the section's order: its facts are grouped by source.
HEADINGS = (OPENING, WIDTH, ASSUMPTION, STABILITY, BACKWARD, PYTORCH, READ_MORE)

# ------------------------------------------------------------------ the sources read

_VASWANI_VIA = ("a Markdown transcription of the paper's pages 4-5 in a public repository (section 3.2.1 with its "
                "footnote and reference [3]); the reference list checked against several further transcriptions")

#: Why a finding of this module is new: its statement was in NOT_CHECKABLE until its source was read.
_READ_AT_SOURCE = "new: was not checkable; read at its source"


def _vaswani(locator, via=_VASWANI_VIA):
    return PaperSource("Vaswani et al. (2017)", "Attention Is All You Need", "1706.03762", locator, read_via=via)


#: huggingface/transformers: each file read at the commit the source index stores for it.
_HF = "huggingface/transformers"
T5_MODELING = dict(path="src/transformers/models/t5/modeling_t5.py", commit="6b8b757dfcb582379a64f013cdce46c43629f2b0")
BERT_CONFIG = dict(path="src/transformers/models/bert/configuration_bert.py", commit="6294b787a53ad369e4f372983188d5bd31a45e8d")
GPT2_CONFIG = dict(path="src/transformers/models/gpt2/configuration_gpt2.py", commit="1c70522e01cdf5fcc6ebda6c372ee0198d557c53")
LLAMA_CONFIG = dict(path="src/transformers/models/llama/configuration_llama.py", commit="4bdeeced9ce971bed8cca7ab203c3b70cffab4ca")
MISTRAL_CONFIG = dict(path="src/transformers/models/mistral/configuration_mistral.py",
                      commit="0b07a74c673bdf8fbd472a1c7df139b357495414")
QWEN2_CONFIG = dict(path="src/transformers/models/qwen2/configuration_qwen2.py", commit="caa3177646255d2cf73626315c8582722af4749c")
GEMMA_CONFIG = dict(path="src/transformers/models/gemma/configuration_gemma.py", commit="3676fc805228e63d9ae97b622d715af847c276c6")
#: pytorch/pytorch: the autocast op registrations, which the AMP documentation's op lists describe.
AUTOCAST = dict(path="aten/src/ATen/autocast_mode.cpp", commit="cfed411fae0c18aa3d20351bc8dc8e1218db77ff")


def _hf(file, locator):
    return RepoSource(_HF, file["path"], locator, commit=file["commit"])


# ------------------------------------------------------------------ Vaswani et al.'s footnote


def _vaswani_claims():
    footnote = documentary(
        "footnote 4 gives the variance argument",
        fact="The variance argument (independent unit-variance components make q.k have mean 0 and variance d_k) is "
             "the one Vaswani et al. give in their footnote 4.",
        stated=yes("footnote 4 gives it"), found=1.0,
        source=_vaswani("section 3.2.1, footnote 4"),
        source_says="Footnote 4, attached to the sentence suspecting that large dot products push the softmax into "
                    "small-gradient regions, assumes independent components of mean 0 and variance 1 and concludes "
                    "that q.k has mean 0 and variance d_k.")
    erratum = Erratum(
        no("in the body of section 3.2.1, citing Britz et al. (2017), not in footnote 4"),
        "This is the argument in footnote 4 of Vaswani et al. (2017); the paragraph it annotates (section 3.2.1) "
        "also reports, citing Britz et al. (2017), that additive attention outperformed unscaled dot-product "
        "attention at large d_k.",
        support=(("the paragraph it annotates (section 3.2.1) also reports, citing Britz et al. (2017), that additive "
                  "attention outperformed unscaled dot-product attention at large d_k", "corrected"),),
        regraded=_READ_AT_SOURCE)
    where = dict(
        stated=yes("footnote 4 makes the remark"), found=0.0,
        source=_vaswani("section 3.2.1 (second paragraph after equation 1), footnote 4 and reference [3]"),
        source_says="The remark that additive and dot-product attention are alike at small d_k while additive wins "
                    "over unscaled dot products at larger d_k is a sentence of section 3.2.1's body, supported by "
                    "reference [3] (Britz, Goldie, Luong and Le, 2017, 'Massive exploration of neural machine "
                    "translation architectures', arXiv 1703.03906); footnote 4 holds only the variance argument.")
    additive = (
        documentary(
            "the additive-attention remark is in footnote 4", **where,
            fact="The same footnote 4 also notes that additive attention outperformed unscaled dot-product "
                 "attention at large d_k.",
            reading="'which' refers to footnote 4", verdict="erratum", erratum=erratum),
        documentary(
            "Vaswani et al. report the additive-attention result",
            fact="Vaswani et al. (2017) note that additive attention outperformed unscaled dot-product attention at "
                 "large d_k.",
            stated=yes("the paper reports it"), found=1.0, reading="'which' refers to the paper",
            source=_vaswani("section 3.2.1 (second paragraph after equation 1) and reference [3]"),
            source_says="Section 3.2.1 reports it, as a finding of Britz et al. (2017) (reference [3]), not as an "
                        "experiment of the paper's own."),
    )
    return (
        Claim("vaswani-footnote-attribution", WIDTH,
              "The variance argument is the one Vaswani et al. (2017) give in their footnote 4.",
              "read at the source: Vaswani et al. (2017), section 3.2.1, footnote 4", (footnote,)),
        Claim("vaswani-additive-footnote", WIDTH,
              "The same footnote reports that additive attention did better than unscaled dot-product attention at "
              "large d_k.",
              "read at the source: Vaswani et al. (2017), section 3.2.1 and reference [3]", additive),
    )


# ------------------------------------------------------------------ d_k = 512, "the size real models use"

#: The corrected statement: every per-head width read lies in [64, 256].
_HEAD_RANGE = Stated.between("64 to 256 (64 in the original Transformer, BERT and GPT-2; 128 in GPT-3 and 7B "
                             "Llama, Mistral and Qwen2 configurations; 256 in Gemma 7B)", 64, 257)
_HEAD_ERRATUM = Erratum(
    _HEAD_RANGE,
    "Take the attention head from section 4.2 and make it wide, say d_k = 512 (real models' heads are narrower, "
    "d_k = 64 to 256), initialize it the standard way ...",
    support=(("make it wide, say d_k = 512 (real models' heads are narrower, d_k = 64 to 256)", "corrected"),),
    regraded=_READ_AT_SOURCE)


def _head_width_checks():
    def width(model, found, source, says):
        return documentary(
            f"per-head d_k of {model}", fact=f"d_k = 512 is the size real models use ({model}).",
            stated=Stated.parse("512"), found=float(found), source=source, source_says=says,
            verdict="erratum", erratum=_HEAD_ERRATUM)

    gpt3 = PaperSource("Brown et al. (2020)", "Language Models are Few-Shot Learners", "2005.14165", "table 2.1",
                       read_via="third-party reproductions of table 2.1 (ppmzhang2.github.io's GPT notes list d_head "
                                "128 for the 175B model; labindex.ai lists its 12288 width and 96 heads)")
    return (
        width("the Transformer base", 64, _vaswani("section 3.2.2", "a public dataset viewer's page of the paper's text (section 3.2.2 and "
                                                        "footnote 4)"),
              "The base model uses h = 8 heads with d_k = d_v = d_model / h = 64; 512 is its d_model, "
              "the width of the whole layer, not of a head."),
        width("the Transformer big", 64, _vaswani("table 3 (row 'big')", "several public transcriptions and "
                                                                       "translations of table 3, which agree"),
              "The big model has d_model 1024 and 16 heads and leaves d_k blank, which the table's caption says "
              "means the base value, 64."),
        width("BERT-base", 768 // 12, _hf(BERT_CONFIG, "BertConfig defaults (bert-base-uncased): hidden_size, "
                                                       "num_attention_heads"),
              "The defaults reproduce bert-base: width 768 over 12 heads, so 64 per head."),
        width("GPT-2 (124M)", 768 // 12, _hf(GPT2_CONFIG, "GPT2Config defaults (openai-community/gpt2): n_embd, n_head"),
              "The defaults reproduce the smallest GPT-2: width 768 over 12 heads, so 64 per head."),
        width("GPT-3 175B", 12288 // 96, gpt3, "Table 2.1 lists d_model 12288 and 96 heads for the 175B model, a head "
                                               "width d_head of 128."),
        width("LLaMA-7B", 4096 // 32, _hf(LLAMA_CONFIG, "LlamaConfig defaults (LLaMA-7B): hidden_size, "
                                                        "num_attention_heads, head_dim"),
              "The defaults reproduce LLaMA-7B: width 4096 over 32 heads and head_dim unset, so 128 per head."),
        width("Mistral 7B", 4096 // 32, _hf(MISTRAL_CONFIG, "MistralConfig defaults (Mistral 7B): hidden_size, "
                                                            "num_attention_heads, head_dim"),
              "The defaults reproduce Mistral 7B: width 4096 over 32 query heads (8 key-value heads), head_dim "
              "unset, so 128 per head."),
        width("a Qwen2 configuration", 4096 // 32, _hf(QWEN2_CONFIG, "Qwen2Config defaults: hidden_size, "
                                                                     "num_attention_heads"),
              "The class defaults give width 4096 over 32 heads, so 128 per head."),
        width("Gemma 7B", 256, _hf(GEMMA_CONFIG, "GemmaConfig defaults (gemma-7b): head_dim"),
              "The defaults reproduce gemma-7b: 16 heads of an explicit head_dim of 256 (on a width of 3072).  The "
              "stored copy also has use_adarms fields, unknown to upstream releases: the index may hold a fork's "
              "commit under this repository's name."),
    )


# ------------------------------------------------------------------ T5's folded scaling


def _t5_checks():
    init = _hf(T5_MODELING, "T5PreTrainedModel._init_weights, the T5Attention branch")
    forward = _hf(T5_MODELING, "T5Attention.forward, the scores")
    return (
        documentary(
            "query std is the key std over sqrt(d_kv)",
            fact="T5's query weights start with a standard deviation sqrt(d_k) smaller than its key weights'.",
            stated=yes("smaller by sqrt(d_k)"), found=1.0, source=init,
            source_says="Queries are drawn with std factor/sqrt(d_model * d_kv), keys and values with "
                        "factor/sqrt(d_model): the query's std is the key's divided by sqrt(d_kv) (d_kv is T5's "
                        "per-head d_k).  A comment there points to Mesh TensorFlow's attention initialisation, "
                        "which was not read."),
        documentary(
            "T5 never divides the scores",
            fact="T5 never divides its attention scores by sqrt(d_k).",
            stated=yes("scores undivided"), found=1.0, source=forward,
            source_says="The scores are the plain product of queries and transposed keys plus the position bias "
                        "(and mask), passed to the softmax with no division."),
    )


# ------------------------------------------------------------------ attention dropout


def _dropout_checks():
    def rate(model, field, file, cls, found, original):
        return documentary(
            f"{model}: {field}", fact=f"{model} applies attention dropout at rate 0.1.",
            stated=Stated.parse("0.1"), found=found, source=_hf(file, f"{cls} defaults: {field}"),
            source_says=f"{cls}'s default {field}, the dropout on the attention probabilities, is {found}, in the "
                        f"class whose defaults reproduce {original}; the original authors' own release was not read.")

    return (
        rate("GPT-2", "attn_pdrop", GPT2_CONFIG, "GPT2Config", 0.1, "the smallest GPT-2"),
        rate("BERT", "attention_probs_dropout_prob", BERT_CONFIG, "BertConfig", 0.1, "bert-base-uncased"),
    )


#: Exactly zero: the text's "set it to zero".
_ZERO = Stated("zero", 0.0, 0.0, math.nextafter(0.0, 1.0))


def _no_dropout_checks():
    def zero(model, file, cls):
        return documentary(
            f"{model}: attention_dropout", fact=f"{model} sets attention dropout to zero.",
            stated=_ZERO, found=0.0, source=_hf(file, f"{cls} defaults: attention_dropout"),
            source_says=f"{cls}'s default attention_dropout is 0.0 (the class default; a released checkpoint's "
                        "own config.json was not read).")

    return (
        zero("LLaMA", LLAMA_CONFIG, "LlamaConfig"),
        zero("Mistral", MISTRAL_CONFIG, "MistralConfig"),
        zero("Qwen2", QWEN2_CONFIG, "Qwen2Config"),
        zero("Gemma", GEMMA_CONFIG, "GemmaConfig"),
    )


# ------------------------------------------------------------------ mixed precision: what autocast keeps in float32


def _autocast_checks():
    cuda = RepoSource("pytorch/pytorch", AUTOCAST["path"], "the CUDA autocast registrations (TORCH_LIBRARY_IMPL aten, "
                      "Autocast)", commit=AUTOCAST["commit"])
    cpu = RepoSource("pytorch/pytorch", AUTOCAST["path"], "the CPU autocast registrations (TORCH_LIBRARY_IMPL aten, "
                     "AutocastCPU)", commit=AUTOCAST["commit"])
    cuda_checks = (
        documentary(
            "CUDA autocast: softmax in float32",
            fact="Mixed-precision training keeps the softmax and its normaliser in float32.",
            stated=yes("kept in float32"), found=1.0, source=cuda,
            source_says="Under CUDA autocast, softmax and log_softmax (and sum, exp, log and logsumexp) are "
                        "registered to run in float32."),
        documentary(
            "CUDA autocast: matrix products in 16 bits",
            fact="Mixed-precision training runs the matrix products in bfloat16 or float16.",
            stated=yes("16-bit products"), found=1.0, source=cuda,
            source_says="Under CUDA autocast, matmul, mm, bmm, baddbmm and linear are registered to run in the "
                        "lower-precision type; so is the fused scaled_dot_product_attention op as a whole."),
    )
    caveat = Erratum(
        no("CPU autocast leaves the softmax in the input's type"),
        "This is why mixed-precision training on GPUs computes the softmax and its normalizer in float32 (PyTorch's "
        "CUDA autocast does so) even when the matrix products run in bfloat16 or float16; CPU autocast leaves the "
        "softmax in bfloat16.",
        kind="caveat",
        as_written="CUDA autocast, the usual mixed-precision training path, runs softmax in float32 and the matrix "
                   "products in 16 bits",
        confirmed_by=("mixed-precision-softmax",),
        regraded=_READ_AT_SOURCE)
    cpu_check = documentary(
        "CPU autocast: softmax in float32",
        fact="Mixed precision keeps the softmax in float32 on every device autocast serves.",
        stated=yes("kept in float32"), found=0.0, source=cpu, verdict="caveat", erratum=caveat,
        source_says="CPU autocast's float32 list (losses, linear algebra, FFTs, some pooling) has no softmax; an "
                    "op not listed falls through, so softmax runs in the type of its input, bfloat16 after a "
                    "bfloat16 matmul.")
    return cuda_checks, (cpu_check,)


# ------------------------------------------------------------------ the "Read more" pointers and Dehghani et al.


def _reading_claims():
    phuong = documentary(
        "Algorithm 4 is masked attention",
        fact="Algorithm 4 of Phuong and Hutter (2022) states scaled dot-product attention with a mask.",
        stated=yes("algorithm 4 is masked attention"), found=1.0,
        source=PaperSource("Phuong and Hutter (2022)", "Formal Algorithms for Transformers", "2207.09238",
                           "algorithm 4",
                           read_via="the algorithm list in the README of myazdani/formal-algorithms-for-transformers, "
                                    "a PyTorch implementation of the paper's algorithms"),
        source_says="Algorithm 4 is the attention algorithm taking a primary and a context sequence, the query, key "
                    "and value weights and a mask (the multi-head version is algorithm 5).  Whether its notation is "
                    "like the chapter's is a judgement no record decides.")
    dehghani = PaperSource(
        "Dehghani et al. (2023)", "Scaling Vision Transformers to 22 Billion Parameters", "2302.05442",
        "section 2 (the QK-normalisation paragraph)",
        read_via="quotations of that paragraph, placed in section 2, in several independent public notes, "
                 "and a paper review (andlukyane.com), which agree; the paper's own text was not reached")
    time_course = documentary(
        "ViT-22B: logits grew and training diverged near 8B parameters",
        fact="Dehghani et al. adopted QK-norm for ViT-22B after seeing, at about 8 billion parameters, attention "
             "logits grow, weights turn nearly one-hot and training diverge after a few thousand steps.",
        stated=yes("as the text reports"), found=1.0, source=dehghani,
        source_says="Scaling ViT beyond earlier sizes, at around 8B parameters, the loss diverged after a few "
                    "thousand steps because attention logits became extremely large, giving almost one-hot, "
                    "near-zero-entropy attention weights; layer-normalising queries and keys before the dot "
                    "product fixed it.  The text's '(section 5.7)' is the book's own cross-reference.")
    henry = documentary(
        "Henry et al. introduce QK normalisation",
        fact="Henry et al. (2020) introduce normalising queries and keys before their dot product (QK-norm).",
        stated=yes("they introduce it"), found=1.0,
        source=PaperSource("Henry et al. (2020)", "Query-Key Normalization for Transformers", "2010.04245", "abstract",
                           read_via="summaries of the paper in public notes (emergentmind.com's topic page, "
                                    "texonom.com), which agree; the paper's own text was not reached"),
        source_says="The paper proposes QKNorm: each query and key is l2-normalised along the head dimension before "
                    "the product, and a learned scale replaces the division by sqrt(d_k), so the softmax cannot "
                    "saturate arbitrarily; it is evaluated on low-resource translation.")
    logit_growth = dataclasses.replace(time_course, label="Dehghani et al. describe the logit growth that required it",
                                       fact="Dehghani et al. (2023) describe the growth of attention logits that "
                                            "made them normalise queries and keys.")
    dao = PaperSource(
        "Dao et al. (2022)", "FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness", "2205.14135",
        "appendix B.2 and appendix B.4 (algorithm 4)",
        read_via="a Markdown transcription of the paper's appendices A to C in a public repository")
    dao_checks = (
        documentary(
            "appendix B derives the backward pass with D_i = dO_i . O_i",
            fact="Dao et al. (2022) derive this backward pass in their appendix B, with the identity D_i = dO_i . O_i.",
            stated=yes("derived there, with the identity"), found=1.0, source=dao,
            source_says="Appendix B.2 derives dV, dP, dS (through the softmax Jacobian), dQ and dK, defining D_i as "
                        "the row's P . dP and showing it equals the dot product of the output-gradient row with the "
                        "output row; B.4 notes that this rewriting avoids a reduction over a whole row of P."),
        documentary(
            "appendix B runs it tile by tile",
            fact="Dao et al. (2022) organise this backward pass by tiles.",
            stated=yes("by tiles"), found=1.0, source=dao,
            source_says="Appendix B.4 gives the FlashAttention backward pass as algorithm 4, described as a block "
                        "version of the B.2 derivation, with blocks of Q, K and V loaded on chip in turn."),
    )
    notation = documentary(
        "dX is the loss's gradient by X, shaped like X, as in FlashAttention",
        fact="dX denotes the gradient of the loss by X, a matrix of X's shape, following the FlashAttention papers.",
        stated=yes("the same notation"), found=1.0,
        source=dataclasses.replace(dao, locator="appendix B.2 (its first paragraphs)"),
        source_says="Appendix B.2 names the output gradient dO, the partial derivative of a scalar loss by O, and "
                    "dQ, dK, dV likewise, each of the same n x d shape as the matrix it differentiates by.")
    mup = documentary(
        "muP scales attention by 1/d, not 1/sqrt(d)",
        fact="Yang et al. (2022), the muP paper, prescribe scaling attention scores by 1/d_k.",
        stated=yes("1/d_k"), found=1.0,
        source=RepoSource("microsoft/mup", "README.md", "'Basic Usage': the attention scores in a model's forward",
                          commit="89ed7636beed09aaadc7a8391c4a05f1f6fc5bf8"),
        source_says="The authors' muP package, whose README presents it as the code of Tensor Programs V (arXiv "
                    "2203.03466), tells Transformer users to scale attention by 1/d instead of 1/sqrt(d) (written "
                    "8/d, to match 1/sqrt(d) at the common head width 64).  The paper's own argument for it was not "
                    "read.")
    return (
        Claim("read-yang", READ_MORE, "Yang et al. (2022), the muP paper, argue for scaling attention by 1/d_k.",
              "read at the source: the muP authors' package (microsoft/mup README)", (mup,)),
        Claim("gradient-notation", BACKWARD,
              "dX denotes the gradient of the loss by X, a matrix of X's shape, following the notation of the "
              "FlashAttention papers.",
              "read at the source: Dao et al. (2022), appendix B.2", (notation,)),
        Claim("read-dao", READ_MORE,
              "Dao et al. (2022) derive this backward pass in their Appendix B, with the identity D_i = dO_i . O_i, "
              "and organise it by tiles.",
              "read at the source: Dao et al. (2022), appendices B.2 and B.4", dao_checks),
        Claim("read-henry-dehghani", READ_MORE,
              "Henry et al. (2020) introduce QK normalisation, and Dehghani et al. (2023) describe the growth of "
              "logits that forced them to use it.",
              "read at the sources: Henry et al. (2020), abstract; Dehghani et al. (2023), section 2",
              (henry, logit_growth)),
        Claim("dehghani-time-course", ASSUMPTION,
              "Dehghani et al. (2023) took up QK-norm for a 22-billion-parameter ViT after seeing, near 8 billion "
              "parameters, logits grow and training diverge within a few thousand steps.",
              "read at the source: Dehghani et al. (2023), section 2", (time_course,)),
        Claim("read-vaswani", READ_MORE,
              "Vaswani et al. (2017) present the variance argument for the scaling in their section 3.2.1 and its "
              "footnote.",
              "read at the source: Vaswani et al. (2017), section 3.2.1, footnote 4",
              (documentary(
                  "section 3.2.1 and its footnote give the variance argument",
                  fact="Section 3.2.1 of Vaswani et al. and its footnote give the variance argument for the scaling.",
                  stated=yes("section 3.2.1 and footnote 4"), found=1.0,
                  source=_vaswani("section 3.2.1, footnote 4"),
                  source_says="Section 3.2.1 suspects large dot products at large d_k and scales by 1/sqrt(d_k); "
                              "its footnote 4 derives variance d_k for unit-variance independent components."),)),
        Claim("read-phuong-hutter", READ_MORE,
              "Phuong and Hutter (2022), Algorithm 4, state masked scaled dot-product attention precisely.",
              "read at the source: Phuong and Hutter (2022), algorithm 4", (phuong,)),
    )


def claims():
    cuda, cpu = _autocast_checks()
    vaswani = _vaswani_claims()
    return (
        Claim("real-model-head-width", OPENING,
              "d_k = 512 is the size real models use.",
              "read at the sources: per-head d_k of published models' papers and configuration classes",
              _head_width_checks()),
        *vaswani,
        Claim("t5-initialisation-code", ASSUMPTION,
              "T5 folds 1/sqrt(d_k) into W_Q's initialisation: its query weights start with a standard deviation "
              "sqrt(d_k) smaller than its key weights', and no score is divided.",
              "read at the source: huggingface/transformers modeling_t5.py", _t5_checks()),
        Claim("mixed-precision-softmax", STABILITY,
              "Mixed-precision training keeps the softmax and its normaliser in float32 while the matrix products "
              "run in bfloat16 or float16.",
              "read at the source: PyTorch's CUDA autocast op lists", cuda),
        Claim("mixed-precision-softmax-cpu", STABILITY,
              "The same holds wherever autocast runs (the CPU too).",
              "read at the source: PyTorch's CPU autocast op lists", cpu),
        Claim("gpt2-bert-dropout-rate", PYTORCH, "GPT-2 and BERT apply attention dropout at rate 0.1.",
              "read at the source: GPT2Config and BertConfig", _dropout_checks()),
        Claim("recent-llms-no-dropout", PYTORCH, "Recent large language models mostly set attention dropout to zero.",
              "read at the source: LlamaConfig, MistralConfig, Qwen2Config, GemmaConfig", _no_dropout_checks()),
        *_reading_claims(),
    )


CLAIMS = claims()
