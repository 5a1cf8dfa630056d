//! safetensors files written byte by byte, and the corruptions of a fixture's safetensors file.

use super::*;

// ---------------------------------------------------------------------------------------------
// safetensors files, byte by byte.

/// One tensor of a safetensors file as the sweep rewrites it.
#[derive(Debug, Clone)]
pub(super) struct StEntry {
    pub(super) name: String,
    pub(super) dtype: String,
    pub(super) shape: Vec<u64>,
    pub(super) data: Vec<u8>,
}

impl StEntry {
    pub(super) fn numel(&self) -> usize {
        self.shape.iter().product::<u64>() as usize
    }
}

/// The tensors of a (well-formed fixture) safetensors file in offset order, and its metadata.
pub(super) fn read_st(bytes: &[u8]) -> (Vec<StEntry>, Option<Value>) {
    let n = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes")) as usize;
    let header: Map<String, Value> =
        serde_json::from_slice(&bytes[8..8 + n]).expect("a fixture's safetensors header");
    let data = &bytes[8 + n..];
    let mut meta = None;
    let mut entries: Vec<(u64, StEntry)> = Vec::new();
    for (name, info) in header {
        if name == "__metadata__" {
            meta = Some(info);
            continue;
        }
        let numbers = |key: &str| -> Vec<u64> {
            info[key].as_array().expect("a list").iter().map(|v| v.as_u64().expect("a number")).collect()
        };
        let (offsets, shape) = (numbers("data_offsets"), numbers("shape"));
        let dtype = info["dtype"].as_str().expect("a dtype").to_string();
        let data = data[offsets[0] as usize..offsets[1] as usize].to_vec();
        entries.push((offsets[0], StEntry { name, dtype, shape, data }));
    }
    entries.sort_by_key(|(offset, _)| *offset);
    (entries.into_iter().map(|(_, e)| e).collect(), meta)
}

/// The JSON header of `entries` laid out one after another, and their data.
fn st_layout(entries: &[StEntry], meta: Option<&Value>) -> (Map<String, Value>, Vec<u8>) {
    let mut header = Map::new();
    if let Some(meta) = meta {
        header.insert("__metadata__".into(), meta.clone());
    }
    let mut data = Vec::new();
    for e in entries {
        let range = [data.len(), data.len() + e.data.len()];
        header.insert(e.name.clone(), json!({"dtype": e.dtype, "shape": e.shape, "data_offsets": range}));
        data.extend_from_slice(&e.data);
    }
    (header, data)
}

/// A safetensors file: the header's length (8 bytes, little-endian), the header padded with
/// spaces to a multiple of 8 bytes, the data.
fn st_file(header: &[u8], data: &[u8]) -> Vec<u8> {
    let mut h = header.to_vec();
    while !h.len().is_multiple_of(8) {
        h.push(b' ');
    }
    let mut out = (h.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(&h);
    out.extend_from_slice(data);
    out
}

pub(super) fn st_bytes(entries: &[StEntry], meta: Option<&Value>) -> Vec<u8> {
    let (header, data) = st_layout(entries, meta);
    st_file(Value::Object(header).to_string().as_bytes(), &data)
}

/// The corruptions of the safetensors file `bytes` (written as `file`): the tensors edited, the
/// header's length, offsets, shapes and text broken, the file cut or padded.
pub(super) fn safetensors_cases(file: &str, bytes: &[u8], rng: &mut Rng) -> Vec<Case> {
    let (entries, meta) = read_st(bytes);
    let meta = meta.as_ref();
    let pick = rng.below(entries.len());
    let matrices: Vec<usize> = (0..entries.len()).filter(|&i| entries[i].shape.len() == 2).collect();
    let m = if matrices.is_empty() { pick } else { rng.pick(&matrices) };
    let (name, mname) = (entries[pick].name.clone(), entries[m].name.clone());
    let edit = |f: &dyn Fn(&mut Vec<StEntry>)| {
        let mut e = entries.clone();
        f(&mut e);
        st_bytes(&e, meta)
    };
    let mut cases = vec![
        Case::write(format!("'{name}' removed"), file, edit(&|e| drop(e.remove(pick))), &[name.as_str()]),
        Case::write(
            "an unexpected extra tensor",
            file,
            edit(&|e| {
                let extra = StEntry {
                    name: "zz_robustness.unexpected".into(),
                    dtype: "F32".into(),
                    shape: vec![3],
                    data: vec![0; 12],
                };
                e.push(extra);
            }),
            &[],
        ),
        Case::write(
            format!("'{mname}' flattened"),
            file,
            edit(&|e| e[m].shape = vec![e[m].numel() as u64]),
            &[mname.as_str()],
        ),
        Case::write(
            format!("'{mname}' transposed"),
            file,
            edit(&|e| e[m].shape.reverse()),
            &[mname.as_str()],
        ),
        Case::write(
            format!("'{mname}' one row longer"),
            file,
            edit(&|e| {
                let row = e[m].data.len() / e[m].shape[0].max(1) as usize;
                e[m].shape[0] += 1;
                e[m].data.extend(vec![0u8; row]);
            }),
            &[mname.as_str()],
        ),
        Case::write(
            format!("'{name}' empty"),
            file,
            edit(&|e| {
                e[pick].shape = vec![0];
                e[pick].data.clear();
            }),
            &[name.as_str()],
        ),
        Case::write(
            format!("'{name}' all NaN"),
            file,
            edit(&|e| e[pick].data.iter_mut().for_each(|b| *b = 0xFF)),
            &[name.as_str()],
        ),
        Case::write(
            format!("'{name}' renamed '../../escape'"),
            file,
            edit(&|e| e[pick].name = "../../escape".into()),
            &[name.as_str()],
        ),
    ];
    // Stored as another dtype: integers, bools (bytes of 2, which are not bools), other floats,
    // a float8 oxtorch lacks, a name no reader knows.
    for (dtype, size, fill) in [
        ("I64", 8, 1u8),
        ("BOOL", 1, 2),
        ("U8", 1, 7),
        ("F16", 2, 0),
        ("F64", 8, 0),
        ("F8_E4M3", 1, 0),
        ("Q4_ROBUSTNESS", 1, 0),
    ] {
        let data = edit(&|e| {
            let n = e[pick].numel();
            e[pick].dtype = dtype.into();
            e[pick].data = vec![fill; n * size];
        });
        cases.push(Case::write(format!("'{name}' stored as {dtype}"), file, data, &[name.as_str()]));
    }
    // The header's length.
    let header_len = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
    let with_len = |n: u64| {
        let mut b = bytes.to_vec();
        b[..8].copy_from_slice(&n.to_le_bytes());
        b
    };
    for (label, n) in [
        ("past the end", bytes.len() as u64),
        ("u64::MAX", u64::MAX),
        ("2^63", 1 << 63),
        ("0", 0),
        ("7 (inside the JSON)", 7),
        ("one byte short", header_len - 1),
    ] {
        cases.push(Case::write(format!("header length {label}"), file, with_len(n), &[]));
    }
    // Offsets and shapes in the header.
    let (header, data) = st_layout(&entries, meta);
    let with_header = |f: &dyn Fn(&mut Map<String, Value>)| {
        let mut h = header.clone();
        f(&mut h);
        st_file(Value::Object(h).to_string().as_bytes(), &data)
    };
    let (first, second, last) =
        (entries[0].name.clone(), entries[1].name.clone(), entries[entries.len() - 1].name.clone());
    let offsets = |h: &Map<String, Value>, n: &str| h[n]["data_offsets"].clone();
    cases.extend([
        Case::write(
            format!("'{second}' overlapping '{first}'"),
            file,
            with_header(&|h| h[&second]["data_offsets"] = offsets(h, &first)),
            &[],
        ),
        Case::write(
            format!("'{last}' ending past the data"),
            file,
            with_header(&|h| {
                let end = h[&last]["data_offsets"][1].as_u64().unwrap_or(0);
                h[&last]["data_offsets"][1] = json!(end + 1000);
            }),
            &[],
        ),
        Case::write(
            format!("'{name}' offsets reversed"),
            file,
            with_header(&|h| {
                let o = offsets(h, &name);
                h[&name]["data_offsets"] = json!([o[1], o[0]]);
            }),
            &[],
        ),
        Case::write(
            format!("'{name}' ending at u64::MAX"),
            file,
            with_header(&|h| h[&name]["data_offsets"][1] = json!(u64::MAX)),
            &[],
        ),
        Case::write(
            format!("'{name}' of an overflowing shape"),
            file,
            with_header(&|h| h[&name]["shape"] = json!([1u64 << 62, 1u64 << 62, 16])),
            &[],
        ),
        Case::write(
            format!("'{name}' of a negative dim"),
            file,
            with_header(&|h| h[&name]["shape"] = json!([-1])),
            &[],
        ),
        Case::write(
            format!("'{name}' of dtype 5"),
            file,
            with_header(&|h| h[&name]["dtype"] = json!(5)),
            &[],
        ),
        Case::write(
            "a tensor entry that is a string",
            file,
            with_header(&|h| drop(h.insert("zz".into(), json!("x")))),
            &[],
        ),
        Case::write(
            "__metadata__ holding a number",
            file,
            with_header(&|h| drop(h.insert("__metadata__".into(), json!({"format": 5})))),
            &[],
        ),
        Case::write("an empty header", file, st_file(b"{}", &data), &[]),
        Case::write("a header that is a list", file, st_file(b"[]", &data), &[]),
        Case::write("a header that is not JSON", file, st_file(b"not json at all", &data), &[]),
        Case::write("a header that is not UTF-8", file, st_file(&[0xFF, 0xFE, 0xFD, 0x80], &data), &[]),
        Case::write(
            "a header nested 5000 deep",
            file,
            st_file(format!("{{\"a\": {}}}", deep_nesting(5000)).as_bytes(), &data),
            &[],
        ),
    ]);
    // A tensor named twice in the header's text (the second entry wins, or the offsets clash).
    let text = Value::Object(header.clone()).to_string();
    let twice = format!(
        "{},\"{first}\":{}}}",
        &text[..text.len() - 1],
        json!({"dtype": "F32", "shape": [1], "data_offsets": [0, 4]})
    );
    cases.push(Case::write(format!("'{first}' named twice"), file, st_file(twice.as_bytes(), &data), &[]));
    // The data misaligned: a header of odd length, not padded (tensors are copied, not viewed).
    let mut odd = text.into_bytes();
    if odd.len().is_multiple_of(2) {
        odd.push(b' ');
    }
    let mut misaligned = (odd.len() as u64).to_le_bytes().to_vec();
    misaligned.extend_from_slice(&odd);
    misaligned.extend_from_slice(&data);
    cases.push(Case::write("the data misaligned", file, misaligned, &[]));
    // The file cut, padded or replaced.
    cases.extend([
        Case::write("truncated to half", file, half(bytes), &[]),
        Case::write("truncated inside the header", file, bytes[..8 + header_len as usize / 2].to_vec(), &[]),
        Case::write("its last byte missing", file, bytes[..bytes.len() - 1].to_vec(), &[]),
        Case::write("trailing garbage", file, [bytes, b"garbage!".as_slice()].concat(), &[]),
        Case::write("4 bytes", file, bytes[..4].to_vec(), &[]),
        Case::write("0 bytes", file, Vec::new(), &[]),
        Case::of(format!("{file} removed"), vec![Edit::Remove(file.into())], &["no weights"]),
        Case::of(format!("{file} a folder"), vec![Edit::MakeDir(file.into())], &["no weights"]),
    ]);
    cases
}
