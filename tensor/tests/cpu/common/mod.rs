//! Helpers for the golden tests: a small JSON reader (for the case metadata), conversion between
//! safetensors views and oxtorch tensors, torch's `allclose` comparison, and the harness that reads
//! a golden file and runs its cases ([`harness`]).

mod harness;

pub use harness::{case_inputs, panic_message, quietly, strided_view, Golden};

use oxtorch_tensor::{bf16, f16, DType, Tensor};
use safetensors::tensor::TensorView;
use safetensors::Dtype;

/// A parsed JSON value. Numbers keep their text so that integers are read exactly.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Num(String),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

impl Json {
    /// Parses one JSON document.
    pub fn parse(text: &str) -> Result<Json, String> {
        let mut p = Parser { s: text.as_bytes(), i: 0 };
        let v = p.value()?;
        p.ws();
        if p.i != p.s.len() {
            return Err(format!("trailing characters at {} in {text}", p.i));
        }
        Ok(v)
    }

    /// The member `key` of an object (`None` when absent or not an object).
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Obj(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Json::Null)
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Json::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Json::Num(n) => n.parse().ok(),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Json::Num(n) => n.parse().ok(),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_arr(&self) -> Option<&[Json]> {
        match self {
            Json::Arr(a) => Some(a),
            _ => None,
        }
    }
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn eat(&mut self, lit: &str) -> bool {
        if self.s[self.i..].starts_with(lit.as_bytes()) {
            self.i += lit.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: u8) -> Result<(), String> {
        self.ws();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            Ok(())
        } else {
            Err(format!("expected '{}' at {}", c as char, self.i))
        }
    }

    fn value(&mut self) -> Result<Json, String> {
        self.ws();
        let Some(&c) = self.s.get(self.i) else {
            return Err("unexpected end of JSON".into());
        };
        match c {
            b'{' => {
                self.i += 1;
                let mut members = Vec::new();
                self.ws();
                if self.eat("}") {
                    return Ok(Json::Obj(members));
                }
                loop {
                    self.ws();
                    let key = self.string()?;
                    self.expect(b':')?;
                    members.push((key, self.value()?));
                    self.ws();
                    if self.eat("}") {
                        return Ok(Json::Obj(members));
                    }
                    self.expect(b',')?;
                }
            }
            b'[' => {
                self.i += 1;
                let mut items = Vec::new();
                self.ws();
                if self.eat("]") {
                    return Ok(Json::Arr(items));
                }
                loop {
                    items.push(self.value()?);
                    self.ws();
                    if self.eat("]") {
                        return Ok(Json::Arr(items));
                    }
                    self.expect(b',')?;
                }
            }
            b'"' => Ok(Json::Str(self.string()?)),
            _ if self.eat("true") => Ok(Json::Bool(true)),
            _ if self.eat("false") => Ok(Json::Bool(false)),
            _ if self.eat("null") => Ok(Json::Null),
            _ => {
                let start = self.i;
                while self.i < self.s.len()
                    && matches!(self.s[self.i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    self.i += 1;
                }
                if start == self.i {
                    return Err(format!("unexpected character '{}' at {start}", c as char));
                }
                Ok(Json::Num(String::from_utf8_lossy(&self.s[start..self.i]).into_owned()))
            }
        }
    }

    fn string(&mut self) -> Result<String, String> {
        if self.s.get(self.i) != Some(&b'"') {
            return Err(format!("expected a string at {}", self.i));
        }
        self.i += 1;
        let mut out = String::new();
        loop {
            let Some(&c) = self.s.get(self.i) else {
                return Err("unterminated string".into());
            };
            self.i += 1;
            match c {
                b'"' => return Ok(out),
                b'\\' => {
                    let e = *self.s.get(self.i).ok_or("unterminated escape")?;
                    self.i += 1;
                    match e {
                        b'n' => out.push('\n'),
                        b't' => out.push('\t'),
                        b'r' => out.push('\r'),
                        b'u' => {
                            let hex = std::str::from_utf8(
                                self.s.get(self.i..self.i + 4).ok_or("short \\u escape")?,
                            )
                            .map_err(|e| e.to_string())?;
                            let code = u32::from_str_radix(hex, 16).map_err(|e| e.to_string())?;
                            out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                            self.i += 4;
                        }
                        other => out.push(other as char),
                    }
                }
                _ => {
                    // Copy a whole UTF-8 sequence.
                    let start = self.i - 1;
                    let len = match c {
                        0xf0..=0xff => 4,
                        0xe0..=0xef => 3,
                        0xc0..=0xdf => 2,
                        _ => 1,
                    };
                    self.i = start + len;
                    out.push_str(&String::from_utf8_lossy(&self.s[start..self.i]));
                }
            }
        }
    }
}

fn chunks<const N: usize>(data: &[u8]) -> impl Iterator<Item = [u8; N]> + '_ {
    data.chunks_exact(N).map(|c| c.try_into().expect("exact chunk"))
}

/// An oxtorch tensor with the view's dtype, shape and values (safetensors is little-endian).
pub fn tensor_of(view: &TensorView<'_>) -> Tensor {
    let shape = view.shape().to_vec();
    let d = view.data();
    let t = match view.dtype() {
        Dtype::BOOL => Tensor::from_vec(d.iter().map(|&b| b != 0).collect::<Vec<bool>>(), shape),
        Dtype::U8 => Tensor::from_vec(d.to_vec(), shape),
        Dtype::I8 => Tensor::from_vec(d.iter().map(|&b| b as i8).collect::<Vec<i8>>(), shape),
        Dtype::I16 => Tensor::from_vec(chunks(d).map(i16::from_le_bytes).collect::<Vec<_>>(), shape),
        Dtype::I32 => Tensor::from_vec(chunks(d).map(i32::from_le_bytes).collect::<Vec<_>>(), shape),
        Dtype::I64 => Tensor::from_vec(chunks(d).map(i64::from_le_bytes).collect::<Vec<_>>(), shape),
        Dtype::F16 => Tensor::from_vec(
            chunks(d).map(|b| f16::from_bits(u16::from_le_bytes(b))).collect::<Vec<_>>(),
            shape,
        ),
        Dtype::BF16 => Tensor::from_vec(
            chunks(d).map(|b| bf16::from_bits(u16::from_le_bytes(b))).collect::<Vec<_>>(),
            shape,
        ),
        Dtype::F32 => Tensor::from_vec(chunks(d).map(f32::from_le_bytes).collect::<Vec<_>>(), shape),
        Dtype::F64 => Tensor::from_vec(chunks(d).map(f64::from_le_bytes).collect::<Vec<_>>(), shape),
        other => panic!("unsupported safetensors dtype {other:?}"),
    };
    t.expect("a safetensors view has a consistent shape")
}

/// A tensor's values read exactly: integers and bools as i64, floats as f64.
#[derive(Debug)]
pub enum Values {
    Int(Vec<i64>),
    Float(Vec<f64>),
}

/// Reads `t`'s values with `to_vec` in its own dtype (no oxtorch cast is involved).
pub fn values_of(t: &Tensor) -> oxtorch_tensor::Result<Values> {
    fn ints<T: Copy + Into<i64>>(v: Vec<T>) -> Values {
        Values::Int(v.into_iter().map(Into::into).collect())
    }
    Ok(match t.dtype() {
        DType::Bool => Values::Int(t.to_vec::<bool>()?.into_iter().map(i64::from).collect()),
        DType::U8 => ints(t.to_vec::<u8>()?),
        DType::I8 => ints(t.to_vec::<i8>()?),
        DType::I16 => ints(t.to_vec::<i16>()?),
        DType::I32 => ints(t.to_vec::<i32>()?),
        DType::I64 => ints(t.to_vec::<i64>()?),
        DType::F16 => Values::Float(t.to_vec::<f16>()?.into_iter().map(f16::to_f64).collect()),
        DType::BF16 => Values::Float(t.to_vec::<bf16>()?.into_iter().map(bf16::to_f64).collect()),
        DType::F32 => Values::Float(t.to_vec::<f32>()?.into_iter().map(f64::from).collect()),
        DType::F64 => Values::Float(t.to_vec::<f64>()?),
    })
}

/// torch.allclose's default-ish tolerances per dtype, `(rtol, atol)`; integers and bools are exact.
pub fn tolerance(dtype: DType) -> (f64, f64) {
    match dtype {
        DType::F16 => (1e-3, 1e-5),
        DType::BF16 => (1.6e-2, 1e-5),
        DType::F32 => (1.3e-6, 1e-5),
        DType::F64 => (1e-7, 1e-7),
        _ => (0.0, 0.0),
    }
}

/// torch.allclose's element rule with `equal_nan=True`: `|got - want| <= atol + rtol * |want|`;
/// infinities must match exactly.
pub fn close(got: f64, want: f64, rtol: f64, atol: f64) -> bool {
    if got.is_nan() || want.is_nan() {
        return got.is_nan() && want.is_nan();
    }
    if got.is_infinite() || want.is_infinite() {
        return got == want;
    }
    (got - want).abs() <= atol + rtol * want.abs()
}

/// Checks `got` against torch's `want`: same dtype, same shape, values within `(rtol, atol)`.
/// The error lists the first few mismatching elements.
pub fn compare(got: &Tensor, want: &Tensor, rtol: f64, atol: f64) -> Result<(), String> {
    if got.dtype() != want.dtype() {
        return Err(format!("dtype: torch gives {}, oxtorch gives {}", want.dtype(), got.dtype()));
    }
    if got.dims() != want.dims() {
        return Err(format!("shape: torch gives {:?}, oxtorch gives {:?}", want.dims(), got.dims()));
    }
    let g = values_of(got).map_err(|e| format!("reading oxtorch's output: {e}"))?;
    let w = values_of(want).map_err(|e| format!("reading torch's output: {e}"))?;
    let mut bad = Vec::new();
    let mut n_bad = 0usize;
    let mut note = |i: usize, g: String, w: String| {
        n_bad += 1;
        if bad.len() < 5 {
            bad.push(format!("[{i}] torch {w}, oxtorch {g}"));
        }
    };
    match (&g, &w) {
        (Values::Int(g), Values::Int(w)) => {
            for (i, (a, b)) in g.iter().zip(w).enumerate() {
                if a != b {
                    note(i, a.to_string(), b.to_string());
                }
            }
        }
        (Values::Float(g), Values::Float(w)) => {
            for (i, (&a, &b)) in g.iter().zip(w).enumerate() {
                if !close(a, b, rtol, atol) {
                    note(i, format!("{a:?}"), format!("{b:?}"));
                }
            }
        }
        _ => unreachable!("equal dtypes read the same way"),
    }
    if n_bad == 0 {
        Ok(())
    } else {
        Err(format!("{n_bad} of {} values differ: {}", got.numel(), bad.join("; ")))
    }
}
