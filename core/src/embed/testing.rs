//! A small deterministic embedder for tests of the plumbing.
//!
//! It is a real [`Embedder`]: a bag of words over a fixed vocabulary (one
//! dimension per word, plus one for every other word), L2-normalised, so
//! cosine similarities can be worked out by hand. It counts the passages it
//! embeds, can refuse any batch holding a marker string, and can be switched
//! to "unavailable".

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::{EmbedError, Embedder, normalize};

/// See the module docs.
#[derive(Debug)]
pub(crate) struct VocabEmbedder {
    model_id: String,
    vocab: Vec<String>,
    refuse_marker: Option<String>,
    /// Passages embedded so far (probes included).
    pub(crate) embedded: AtomicUsize,
    /// While set, every call fails with `Unavailable`.
    pub(crate) down: AtomicBool,
    batch: usize,
    /// The [`Embedder::ensemble`] model, when set.
    ensemble: Option<Box<VocabEmbedder>>,
}

impl VocabEmbedder {
    /// Dimensions: one per `vocab` word, then one for any other word.
    pub(crate) fn new(model_id: &str, vocab: &[&str]) -> VocabEmbedder {
        VocabEmbedder {
            model_id: model_id.to_owned(),
            vocab: vocab.iter().map(|w| w.to_lowercase()).collect(),
            refuse_marker: None,
            embedded: AtomicUsize::new(0),
            down: AtomicBool::new(false),
            batch: 4,
            ensemble: None,
        }
    }

    /// Carries `ensemble` as its [`Embedder::ensemble`] model.
    pub(crate) fn with_ensemble(mut self, ensemble: VocabEmbedder) -> VocabEmbedder {
        self.ensemble = Some(Box::new(ensemble));
        self
    }

    /// Refuses (as a 4xx would) any batch with a passage containing `marker`.
    pub(crate) fn refusing(mut self, marker: &str) -> VocabEmbedder {
        self.refuse_marker = Some(marker.to_owned());
        self
    }

    /// Sets the pass batch size.
    pub(crate) fn with_batch(mut self, batch: usize) -> VocabEmbedder {
        self.batch = batch;
        self
    }

    fn vector(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0.0f32; self.vocab.len() + 1];
        for word in text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            let word = word.to_lowercase();
            let idx = self
                .vocab
                .iter()
                .position(|w| *w == word)
                .unwrap_or(self.vocab.len());
            v[idx] += 1.0;
        }
        if v.iter().all(|&x| x == 0.0) {
            v[self.vocab.len()] = 1.0;
        }
        normalize(&mut v).expect("a non-zero vector");
        v
    }
}

impl Embedder for VocabEmbedder {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn dimensions(&self) -> usize {
        self.vocab.len() + 1
    }

    fn batch_size(&self) -> usize {
        self.batch
    }

    fn embed_passages(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if self.down.load(Ordering::SeqCst) {
            return Err(EmbedError::Unavailable("test embedder is down".to_owned()));
        }
        if let Some(marker) = &self.refuse_marker
            && texts.iter().any(|t| t.contains(marker.as_str()))
        {
            return Err(EmbedError::Refused(format!("input contains {marker}")));
        }
        self.embedded.fetch_add(texts.len(), Ordering::SeqCst);
        Ok(texts.iter().map(|t| self.vector(t)).collect())
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        if self.down.load(Ordering::SeqCst) {
            return Err(EmbedError::Unavailable("test embedder is down".to_owned()));
        }
        Ok(self.vector(text))
    }

    fn ensemble(&self) -> Option<&dyn Embedder> {
        self.ensemble.as_deref().map(|e| e as &dyn Embedder)
    }
}
