//! torch-compatible tensor printing.
//!
//! Reproduces `repr(tensor)` from `torch/_tensor_str.py` under torch's print options (precision,
//! threshold, edgeitems, linewidth, sci_mode), which [`set_printoptions`] changes process-wide and
//! [`with_printoptions`] overrides for one thread while a closure runs.

use std::cell::Cell;
use std::sync::RwLock;

use oxtorch_core::DType;

/// The text every repr starts with; its length is the base indent of nested rows.
const PREFIX: &str = "tensor(";

/// torch's `PRINT_OPTS`: how tensors are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrintOptions {
    /// Digits after the decimal point (default 4).
    pub precision: usize,
    /// Tensors with more elements than this are summarised (default 1000; `usize::MAX` is torch's
    /// `inf` of the "full" profile).
    pub threshold: usize,
    /// Items shown at each end of a summarised dimension (default 3).
    pub edgeitems: usize,
    /// Target line width for wrapping rows and suffixes (default 80).
    pub linewidth: usize,
    /// `Some(true)` forces scientific notation for floats, `Some(false)` forbids it, `None` lets
    /// torch's heuristic decide (default).
    pub sci_mode: Option<bool>,
}

impl Default for PrintOptions {
    fn default() -> Self {
        PrintOptions { precision: 4, threshold: 1000, edgeitems: 3, linewidth: 80, sci_mode: None }
    }
}

impl PrintOptions {
    /// These options updated the way torch's `set_printoptions` updates `PRINT_OPTS`: a known
    /// `profile` ("default", "short", "full") first resets precision, threshold, edgeitems and
    /// linewidth (an unknown profile is ignored, as in torch); then every `Some` field is set;
    /// `sci_mode` is always assigned (torch sets it even when `None`).
    pub fn updated(
        self,
        precision: Option<usize>,
        threshold: Option<usize>,
        edgeitems: Option<usize>,
        linewidth: Option<usize>,
        sci_mode: Option<bool>,
        profile: Option<&str>,
    ) -> PrintOptions {
        let mut o = self;
        let reset = |o: &mut PrintOptions, precision: usize, threshold: usize, edgeitems: usize| {
            (o.precision, o.threshold, o.edgeitems, o.linewidth) = (precision, threshold, edgeitems, 80);
        };
        match profile {
            Some("default") => reset(&mut o, 4, 1000, 3),
            Some("short") => reset(&mut o, 2, 1000, 2),
            Some("full") => reset(&mut o, 4, usize::MAX, 3),
            _ => {}
        }
        o.precision = precision.unwrap_or(o.precision);
        o.threshold = threshold.unwrap_or(o.threshold);
        o.edgeitems = edgeitems.unwrap_or(o.edgeitems);
        o.linewidth = linewidth.unwrap_or(o.linewidth);
        o.sci_mode = sci_mode;
        o
    }
}

/// The process-wide options ([`set_printoptions`]).
static OPTIONS: RwLock<PrintOptions> =
    RwLock::new(PrintOptions { precision: 4, threshold: 1000, edgeitems: 3, linewidth: 80, sci_mode: None });

thread_local! {
    /// A per-thread override installed by [`with_printoptions`].
    static LOCAL: Cell<Option<PrintOptions>> = const { Cell::new(None) };
}

/// Sets the process-wide print options (torch's `torch.set_printoptions(precision, threshold,
/// edgeitems, linewidth, profile, sci_mode)`); see [`PrintOptions::updated`] for the rules.
pub fn set_printoptions(
    precision: Option<usize>,
    threshold: Option<usize>,
    edgeitems: Option<usize>,
    linewidth: Option<usize>,
    sci_mode: Option<bool>,
    profile: Option<&str>,
) {
    let mut options = OPTIONS.write().unwrap_or_else(|e| e.into_inner());
    *options = options.updated(precision, threshold, edgeitems, linewidth, sci_mode, profile);
}

/// The process-wide print options (torch's `torch._tensor_str.get_printoptions()`).
pub fn get_printoptions() -> PrintOptions {
    *OPTIONS.read().unwrap_or_else(|e| e.into_inner())
}

/// Runs `f` with `options` used for printing on this thread only (the process-wide options are
/// untouched; other threads are unaffected), restoring the previous override afterwards.
pub fn with_printoptions<R>(options: PrintOptions, f: impl FnOnce() -> R) -> R {
    /// Restores the previous override even if `f` panics.
    struct Restore(Option<PrintOptions>);
    impl Drop for Restore {
        fn drop(&mut self) {
            LOCAL.with(|l| l.set(self.0));
        }
    }
    let _restore = Restore(LOCAL.with(|l| l.replace(Some(options))));
    f()
}

/// The options in effect on this thread: its override, else the process-wide ones.
fn current_options() -> PrintOptions {
    LOCAL.with(Cell::get).unwrap_or_else(get_printoptions)
}

/// One element as the printer sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum PrintValue {
    /// A `torch.bool` element.
    Bool(bool),
    /// An integer element (any integer dtype).
    Int(i64),
    /// A floating-point element, widened to `f64` exactly.
    Float(f64),
}

impl PrintValue {
    /// The value as a float, for the statistics and formatting of floating dtypes.
    fn as_f64(self) -> f64 {
        match self {
            PrintValue::Bool(b) => f64::from(u8::from(b)),
            PrintValue::Int(i) => i as f64,
            PrintValue::Float(f) => f,
        }
    }

    /// Python's `str()` of the element for non-floating dtypes (`True`, `-3`).
    fn plain_str(self) -> String {
        match self {
            PrintValue::Bool(true) => "True".to_string(),
            PrintValue::Bool(false) => "False".to_string(),
            PrintValue::Int(i) => i.to_string(),
            PrintValue::Float(f) if f.is_finite() && f.fract() == 0.0 => format!("{f:.0}"),
            PrintValue::Float(f) => non_finite_str(f).unwrap_or_else(|| f.to_string()),
        }
    }
}

/// Formats a tensor the way torch's `repr` does.
///
/// `shape`: sizes (empty = 0-dim). `get(i)`: the element at flat row-major index `i` (only called for
/// elements that are shown, so summarised huge tensors stay cheap). `dtype`: decides the `dtype=` suffix
/// and whether values print as float/int/bool. `extra_suffixes`: already-formatted suffixes such as
/// "device='xla:0'" or "requires_grad=True" appended (in order) after the dtype suffix, comma-separated
/// like torch. A `device=...` suffix is the exception: torch prints it before `size=`/`dtype=`, so it is
/// moved to the front.
pub(crate) fn format_tensor(
    shape: &[usize],
    dtype: DType,
    get: &dyn Fn(usize) -> PrintValue,
    extra_suffixes: &[String],
) -> String {
    let (device, others): (Vec<&String>, Vec<&String>) =
        extra_suffixes.iter().partition(|s| s.starts_with("device="));
    let mut suffixes: Vec<String> = device.into_iter().cloned().collect();
    let opts = current_options();
    let numel: usize = shape.iter().product();
    let body = if numel == 0 {
        suffixes.extend(empty_suffixes(shape, dtype));
        "[]".to_string()
    } else {
        if opts.edgeitems == 0 {
            // torch prints the size whenever `edgeitems` is 0, summarised or not.
            suffixes.push(format!("size={}", python_tuple(shape)));
        }
        if !has_default_dtype(dtype) {
            suffixes.push(dtype_suffix(dtype));
        }
        tensor_body(shape, dtype, get, numel > opts.threshold, &opts)
    };
    suffixes.extend(others.into_iter().cloned());
    add_suffixes(format!("{PREFIX}{body}"), &suffixes, opts.linewidth)
}

/// Whether torch omits the `dtype=` suffix for a non-empty tensor of this dtype.
fn has_default_dtype(dtype: DType) -> bool {
    dtype == DType::default_float() || dtype == DType::I64 || dtype == DType::Bool
}

/// The `dtype=torch.xxx` suffix.
fn dtype_suffix(dtype: DType) -> String {
    format!("dtype={dtype}")
}

/// Suffixes of an empty tensor: its size unless 1-D, and its dtype unless the default float dtype.
fn empty_suffixes(shape: &[usize], dtype: DType) -> Vec<String> {
    let mut suffixes = Vec::new();
    if shape.len() != 1 {
        suffixes.push(format!("size={}", python_tuple(shape)));
    }
    if dtype != DType::default_float() {
        suffixes.push(dtype_suffix(dtype));
    }
    suffixes
}

/// Python's `str(tuple(shape))`: `(0, 3)`, `(0,)`, `()`.
fn python_tuple(shape: &[usize]) -> String {
    match shape {
        [single] => format!("({single},)"),
        _ => {
            let parts: Vec<String> = shape.iter().map(usize::to_string).collect();
            format!("({})", parts.join(", "))
        }
    }
}

/// Appends suffixes after the tensor text, starting a new line when one would pass the line width
/// (torch's `_add_suffixes`, including its off-by-two line length bookkeeping).
fn add_suffixes(tensor_str: String, suffixes: &[String], linewidth: usize) -> String {
    let indent = PREFIX.len();
    let mut last_line_len = match tensor_str.rfind('\n') {
        Some(pos) => tensor_str.len() - pos + 1,
        None => tensor_str.len() + 2,
    };
    let mut out = tensor_str;
    for suffix in suffixes {
        if last_line_len + suffix.len() + 2 > linewidth {
            out.push_str(&format!(",\n{}{suffix}", " ".repeat(indent)));
            last_line_len = indent + suffix.len();
        } else {
            out.push_str(&format!(", {suffix}"));
            last_line_len += suffix.len() + 2;
        }
    }
    out.push(')');
    out
}

/// The bracketed contents of a non-empty tensor (torch's `_tensor_str`).
fn tensor_body(
    shape: &[usize],
    dtype: DType,
    get: &dyn Fn(usize) -> PrintValue,
    summarize: bool,
    opts: &PrintOptions,
) -> String {
    let dims: Vec<ShownDim> =
        shape.iter().map(|&size| ShownDim::new(size, summarize, opts.edgeitems)).collect();
    let values = gather_shown(shape, &dims, get);
    let formatter = Formatter::new(dtype, &values, opts);
    let mut printer =
        Printer { dims: &dims, formatter: &formatter, values: values.iter(), linewidth: opts.linewidth };
    printer.render(0, PREFIX.len())
}

/// The indices of one dimension that are printed, and whether `...` stands for the elided middle.
struct ShownDim {
    /// Printed indices, in order.
    indices: Vec<usize>,
    /// True when the middle of the dimension is replaced by `...` after the first `edge` items.
    elided: bool,
    /// The number of items shown before the `...`.
    edge: usize,
}

impl ShownDim {
    /// Chooses the printed indices of a dimension of `size` elements.
    fn new(size: usize, summarize: bool, edge: usize) -> Self {
        if summarize && size > 2 * edge {
            let indices = (0..edge).chain(size - edge..size).collect();
            ShownDim { indices, elided: true, edge }
        } else {
            ShownDim { indices: (0..size).collect(), elided: false, edge }
        }
    }
}

/// Fetches every printed element in row-major order (the data of torch's `get_summarized_data`).
fn gather_shown(shape: &[usize], dims: &[ShownDim], get: &dyn Fn(usize) -> PrintValue) -> Vec<PrintValue> {
    let mut offsets = vec![0usize];
    for (d, dim) in dims.iter().enumerate() {
        let stride: usize = shape[d + 1..].iter().product();
        offsets =
            offsets.iter().flat_map(|&base| dim.indices.iter().map(move |&i| base + i * stride)).collect();
    }
    offsets.into_iter().map(get).collect()
}

/// Walks the printed elements and lays them out with brackets, separators and line wrapping.
struct Printer<'a> {
    /// The printed indices of every dimension.
    dims: &'a [ShownDim],
    /// Formats single elements to a common width.
    formatter: &'a Formatter,
    /// The printed elements, consumed in row-major order.
    values: std::slice::Iter<'a, PrintValue>,
    /// Target line width for wrapping rows.
    linewidth: usize,
}

impl Printer<'_> {
    /// Renders the sub-tensor starting at dimension `dim`, whose `[` sits at column `indent`
    /// (torch's `_tensor_str_with_formatter`).
    fn render(&mut self, dim: usize, indent: usize) -> String {
        match self.dims.len() - dim {
            0 => self.next_formatted(),
            1 => self.render_vector(dim, indent),
            rank => self.render_nested(dim, indent, rank),
        }
    }

    /// Formats the next element.
    fn next_formatted(&mut self) -> String {
        let value = self.values.next().expect("printer ran out of gathered elements");
        self.formatter.format(*value)
    }

    /// Renders a tensor of rank >= 2: sub-tensors separated by `rank - 1` newlines.
    fn render_nested(&mut self, dim: usize, indent: usize, rank: usize) -> String {
        let shown = &self.dims[dim];
        let mut slices = Vec::with_capacity(shown.indices.len() + 1);
        for k in 0..shown.indices.len() {
            if shown.elided && k == shown.edge {
                slices.push("...".to_string());
            }
            slices.push(self.render(dim + 1, indent + 1));
        }
        if shown.elided && shown.edge == 0 {
            slices.push("...".to_string());
        }
        let separator = format!(",{}{}", "\n".repeat(rank - 1), " ".repeat(indent + 1));
        format!("[{}]", slices.join(&separator))
    }

    /// Renders a 1-D row, wrapping it so lines stay within the line width (torch's `_vector_str`).
    fn render_vector(&mut self, dim: usize, indent: usize) -> String {
        let shown = &self.dims[dim];
        let mut items = Vec::with_capacity(shown.indices.len() + 1);
        for k in 0..shown.indices.len() {
            if shown.elided && k == shown.edge {
                items.push(" ...".to_string());
            }
            items.push(self.next_formatted());
        }
        if shown.elided && shown.edge == 0 {
            // torch's `edgeitems=0`: the whole row is one `...`.
            items.push("...".to_string());
        }
        let element_length = self.formatter.width + 2;
        let per_line = (self.linewidth.saturating_sub(indent) / element_length).max(1);
        let lines: Vec<String> = items.chunks(per_line).map(|line| line.join(", ")).collect();
        let separator = format!(",\n{}", " ".repeat(indent + 1));
        format!("[{}]", lines.join(&separator))
    }
}

/// How elements are written (the modes of torch's `_Formatter`).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Style {
    /// Non-floating dtypes: Python's `str()` of the value.
    Plain,
    /// Floats that are all integers: `3.`, `-20.`.
    IntegerFloat,
    /// Fixed point with `precision` decimals: `0.1000`.
    Fixed,
    /// Python scientific notation with `precision` decimals: `1.0000e-05`.
    Scientific,
}

/// Chooses one style and width for all printed elements, then right-aligns each to that width.
struct Formatter {
    /// How each element is written.
    style: Style,
    /// Width every element is padded to.
    width: usize,
    /// Digits after the decimal point.
    precision: usize,
}

impl Formatter {
    /// Picks the style from the printed elements the way torch's `_Formatter.__init__` does.
    fn new(dtype: DType, values: &[PrintValue], opts: &PrintOptions) -> Self {
        let precision = opts.precision;
        if !dtype.is_float() {
            let width = values.iter().map(|v| v.plain_str().len()).max().unwrap_or(0).max(1);
            return Formatter { style: Style::Plain, width, precision };
        }
        let finite: Vec<f64> =
            values.iter().map(|v| v.as_f64()).filter(|f| f.is_finite() && *f != 0.0).collect();
        let style = float_style(&finite, opts.sci_mode);
        let width = finite.iter().map(|&f| float_str(style, f, precision).len()).max().unwrap_or(0).max(1);
        Formatter { style, width, precision }
    }

    /// Writes one element, left-padded to the common width.
    fn format(&self, value: PrintValue) -> String {
        let text = match self.style {
            Style::Plain => value.plain_str(),
            style => float_str(style, value.as_f64(), self.precision),
        };
        format!("{text:>width$}", width = self.width)
    }
}

/// The float style for the nonzero finite elements (integer, fixed or scientific); `sci_mode`
/// (torch's `PRINT_OPTS.sci_mode`) overrides the scientific heuristic when set.
fn float_style(nonzero_finite: &[f64], sci_mode: Option<bool>) -> Style {
    if nonzero_finite.is_empty() {
        return Style::IntegerFloat;
    }
    let abs = nonzero_finite.iter().map(|f| f.abs());
    let min = abs.clone().fold(f64::INFINITY, f64::min);
    let max = abs.fold(0.0, f64::max);
    let scientific = sci_mode.unwrap_or(max / min > 1000.0 || max > 1.0e8 || min < 1.0e-4);
    let integers = nonzero_finite.iter().all(|f| f.ceil() == *f);
    match (scientific, integers) {
        (true, _) => Style::Scientific,
        (false, true) => Style::IntegerFloat,
        (false, false) => Style::Fixed,
    }
}

/// Python's text for `nan`, `inf` and `-inf`; `None` for finite values.
fn non_finite_str(value: f64) -> Option<String> {
    if value.is_nan() {
        Some("nan".to_string())
    } else if value.is_infinite() {
        Some(if value > 0.0 { "inf" } else { "-inf" }.to_string())
    } else {
        None
    }
}

/// Writes a float in one of the floating styles, without padding.
fn float_str(style: Style, value: f64, precision: usize) -> String {
    if let Some(text) = non_finite_str(value) {
        return text;
    }
    match style {
        Style::IntegerFloat => format!("{value:.0}."),
        Style::Scientific => python_scientific(value, precision),
        Style::Fixed | Style::Plain => format!("{value:.precision$}"),
    }
}

/// Python's `'{:.4e}'.format(value)` (with `precision` digits) for a finite value: Rust's
/// `1.2346e10` becomes `1.2346e+10`.
fn python_scientific(value: f64, precision: usize) -> String {
    let rust = format!("{value:.precision$e}");
    let (mantissa, exponent) = rust.split_once('e').expect("`{:e}` output always has an exponent");
    let exponent: i32 = exponent.parse().expect("`{:e}` exponent is an integer");
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exponent.unsigned_abs())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Formats `data` (row-major) as a tensor of `shape` and `dtype`.
    fn repr(shape: &[usize], dtype: DType, data: &[PrintValue]) -> String {
        format_tensor(shape, dtype, &|i| data[i], &[])
    }

    /// Float elements of a float32 tensor (values rounded through `f32` like torch stores them).
    fn f32s(values: &[f64]) -> Vec<PrintValue> {
        values.iter().map(|&v| PrintValue::Float(v as f32 as f64)).collect()
    }

    /// Integer elements.
    fn ints(values: impl IntoIterator<Item = i64>) -> Vec<PrintValue> {
        values.into_iter().map(PrintValue::Int).collect()
    }

    #[test]
    fn float_2d() {
        let data = f32s(&[0.1, -2.0, 3.33335, 4.5]);
        assert_eq!(
            repr(&[2, 2], DType::F32, &data),
            "tensor([[ 0.1000, -2.0000],\n        [ 3.3333,  4.5000]])"
        );
    }

    #[test]
    fn mixed_magnitudes_use_scientific() {
        let data = f32s(&[1e-5, 1.0, 12345678900.0]);
        assert_eq!(repr(&[3], DType::F32, &data), "tensor([1.0000e-05, 1.0000e+00, 1.2346e+10])");
    }

    #[test]
    fn integer_valued_floats() {
        let data = f32s(&[1.0, -2.0, 30.0, 0.0]);
        assert_eq!(repr(&[4], DType::F32, &data), "tensor([ 1., -2., 30.,  0.])");
    }

    #[test]
    fn integer_valued_floats_scientific() {
        let data = f32s(&[1.0, 1e10]);
        assert_eq!(repr(&[2], DType::F32, &data), "tensor([1.0000e+00, 1.0000e+10])");
    }

    #[test]
    fn negative_values() {
        let data = f32s(&[-1.5, 0.25, -3.125, -0.0]);
        assert_eq!(repr(&[4], DType::F32, &data), "tensor([-1.5000,  0.2500, -3.1250, -0.0000])");
    }

    #[test]
    fn nan_and_inf() {
        let data = f32s(&[1.5, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0]);
        assert_eq!(repr(&[5], DType::F32, &data), "tensor([1.5000,    nan,    inf,   -inf, 0.0000])");
        let data = f32s(&[f64::NAN, 0.0]);
        assert_eq!(repr(&[2], DType::F32, &data), "tensor([nan, 0.])");
    }

    #[test]
    fn int64() {
        let data = ints([1, -20, 300, 4]);
        assert_eq!(repr(&[2, 2], DType::I64, &data), "tensor([[  1, -20],\n        [300,   4]])");
    }

    #[test]
    fn int32_and_uint8_suffixes() {
        let data = ints([1, -20, 300]);
        assert_eq!(repr(&[3], DType::I32, &data), "tensor([  1, -20, 300], dtype=torch.int32)");
        let data = ints([0, 255]);
        assert_eq!(repr(&[2], DType::U8, &data), "tensor([  0, 255], dtype=torch.uint8)");
    }

    #[test]
    fn bool_tensor() {
        let data = [PrintValue::Bool(true), PrintValue::Bool(false), PrintValue::Bool(true)];
        assert_eq!(repr(&[3], DType::Bool, &data), "tensor([ True, False,  True])");
    }

    #[test]
    fn half_precision_suffixes() {
        let data: Vec<PrintValue> =
            [0.1, -2.0].iter().map(|&v| PrintValue::Float(half::f16::from_f64(v).to_f64())).collect();
        assert_eq!(repr(&[1, 2], DType::F16, &data), "tensor([[ 0.1000, -2.0000]], dtype=torch.float16)");
        let data: Vec<PrintValue> =
            [1.03125, 3.0].iter().map(|&v| PrintValue::Float(half::bf16::from_f64(v).to_f64())).collect();
        assert_eq!(repr(&[2], DType::BF16, &data), "tensor([1.0312, 3.0000], dtype=torch.bfloat16)");
    }

    #[test]
    fn zero_dim() {
        assert_eq!(repr(&[], DType::F32, &f32s(&[3.5])), "tensor(3.5000)");
        assert_eq!(repr(&[], DType::I64, &ints([3])), "tensor(3)");
        assert_eq!(repr(&[], DType::Bool, &[PrintValue::Bool(true)]), "tensor(True)");
        assert_eq!(repr(&[], DType::F64, &[PrintValue::Float(1.5)]), "tensor(1.5000, dtype=torch.float64)");
        assert_eq!(repr(&[], DType::F32, &f32s(&[-0.0])), "tensor(-0.)");
    }

    #[test]
    fn empty() {
        assert_eq!(repr(&[0], DType::F32, &[]), "tensor([])");
        assert_eq!(repr(&[0, 3], DType::F32, &[]), "tensor([], size=(0, 3))");
        assert_eq!(repr(&[0], DType::I64, &[]), "tensor([], dtype=torch.int64)");
        assert_eq!(repr(&[2, 0], DType::F16, &[]), "tensor([], size=(2, 0), dtype=torch.float16)");
    }

    #[test]
    fn summarised_1d() {
        let data = ints(0..2000);
        assert_eq!(repr(&[2000], DType::I64, &data), "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])");
    }

    #[test]
    fn summarised_2d() {
        let data = ints(0..2000);
        let expected = "tensor([[   0,    1,    2,  ...,   47,   48,   49],\n        \
                        [  50,   51,   52,  ...,   97,   98,   99],\n        \
                        [ 100,  101,  102,  ...,  147,  148,  149],\n        \
                        ...,\n        \
                        [1850, 1851, 1852,  ..., 1897, 1898, 1899],\n        \
                        [1900, 1901, 1902,  ..., 1947, 1948, 1949],\n        \
                        [1950, 1951, 1952,  ..., 1997, 1998, 1999]])";
        assert_eq!(repr(&[40, 50], DType::I64, &data), expected);
    }

    #[test]
    fn summarised_3d_float() {
        let data: Vec<PrintValue> = (0..2000).map(|i| PrintValue::Float(f64::from(i) / 4.0)).collect();
        let expected = "tensor([[[0.0000e+00, 2.5000e-01, 5.0000e-01,  ..., 1.7500e+00,\n          \
                        2.0000e+00, 2.2500e+00],\n         \
                        [2.5000e+00, 2.7500e+00, 3.0000e+00,  ..., 4.2500e+00,\n          \
                        4.5000e+00, 4.7500e+00]],\n\n        \
                        [[5.0000e+00, 5.2500e+00, 5.5000e+00,  ..., 6.7500e+00,\n          \
                        7.0000e+00, 7.2500e+00],\n         \
                        [7.5000e+00, 7.7500e+00, 8.0000e+00,  ..., 9.2500e+00,\n          \
                        9.5000e+00, 9.7500e+00]],\n\n        \
                        [[1.0000e+01, 1.0250e+01, 1.0500e+01,  ..., 1.1750e+01,\n          \
                        1.2000e+01, 1.2250e+01],\n         \
                        [1.2500e+01, 1.2750e+01, 1.3000e+01,  ..., 1.4250e+01,\n          \
                        1.4500e+01, 1.4750e+01]],\n\n        \
                        ...,\n\n        \
                        [[4.8500e+02, 4.8525e+02, 4.8550e+02,  ..., 4.8675e+02,\n          \
                        4.8700e+02, 4.8725e+02],\n         \
                        [4.8750e+02, 4.8775e+02, 4.8800e+02,  ..., 4.8925e+02,\n          \
                        4.8950e+02, 4.8975e+02]],\n\n        \
                        [[4.9000e+02, 4.9025e+02, 4.9050e+02,  ..., 4.9175e+02,\n          \
                        4.9200e+02, 4.9225e+02],\n         \
                        [4.9250e+02, 4.9275e+02, 4.9300e+02,  ..., 4.9425e+02,\n          \
                        4.9450e+02, 4.9475e+02]],\n\n        \
                        [[4.9500e+02, 4.9525e+02, 4.9550e+02,  ..., 4.9675e+02,\n          \
                        4.9700e+02, 4.9725e+02],\n         \
                        [4.9750e+02, 4.9775e+02, 4.9800e+02,  ..., 4.9925e+02,\n          \
                        4.9950e+02, 4.9975e+02]]])";
        assert_eq!(repr(&[100, 2, 10], DType::F32, &data), expected);
    }

    #[test]
    fn three_dim() {
        let data: Vec<PrintValue> = (0..12).map(|i| PrintValue::Float(f64::from(i) / 2.0)).collect();
        let expected = "tensor([[[0.0000, 0.5000],\n         \
                        [1.0000, 1.5000],\n         \
                        [2.0000, 2.5000]],\n\n        \
                        [[3.0000, 3.5000],\n         \
                        [4.0000, 4.5000],\n         \
                        [5.0000, 5.5000]]], dtype=torch.float64)";
        assert_eq!(repr(&[2, 3, 2], DType::F64, &data), expected);
    }

    #[test]
    fn long_row_wraps() {
        let data = f32s(&(0..30).map(|i| f64::from(i) / 7.0).collect::<Vec<_>>());
        let expected =
            "tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000, 1.1429,\n        \
                        1.2857, 1.4286, 1.5714, 1.7143, 1.8571, 2.0000, 2.1429, 2.2857, 2.4286,\n        \
                        2.5714, 2.7143, 2.8571, 3.0000, 3.1429, 3.2857, 3.4286, 3.5714, 3.7143,\n        \
                        3.8571, 4.0000, 4.1429])";
        assert_eq!(repr(&[30], DType::F32, &data), expected);
    }

    #[test]
    fn suffixes_wrap_and_order() {
        let data = f32s(&(0..9).map(f64::from).map(|v| v + 0.5).collect::<Vec<_>>());
        let extras = ["device='xla:0'".to_string(), "requires_grad=True".to_string()];
        let got = format_tensor(&[9], DType::F16, &|i| data[i], &extras);
        let expected =
            "tensor([0.5000, 1.5000, 2.5000, 3.5000, 4.5000, 5.5000, 6.5000, 7.5000, 8.5000],\n       \
                        device='xla:0', dtype=torch.float16, requires_grad=True)";
        assert_eq!(got, expected);
    }
}
