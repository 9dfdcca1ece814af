//! The subscript parser: NumPy's syntax (explicit `->` or implicit output, `...` broadcasting,
//! repeated labels within an operand, labels shared by any number of operands) with opt_einsum's
//! label alphabet (every character other than `,-.>` and whitespace is a label: Unicode letters,
//! symbols and digits included -- the stored benchmark instances use `0` as a label, which
//! opt_einsum accepts and NumPy rejects).
//!
//! Error messages follow `ops.md`: `einsum: subscripts '<subscripts>': <what>` naming the
//! operand, label or position (positions count characters of the string as given, whitespace
//! included).

use tenferro_tensor::{Error, Result};

/// One label: a character of the subscripts, or the ellipsis axis `r` counted from the right.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Label {
    /// The `r`-th ellipsis axis from the right (printed as `.`).
    Ell(usize),
    /// A character label.
    Char(char),
}

impl Label {
    /// The label as printed in equations (`.` for an ellipsis axis).
    pub fn display(self) -> char {
        match self {
            Label::Char(c) => c,
            Label::Ell(_) => '.',
        }
    }
}

/// A parsed contraction: label ids index [`Parsed::labels`] and [`Parsed::sizes`].
#[derive(Clone, Debug)]
pub struct Parsed {
    /// The subscripts as given.
    pub subscripts: String,
    /// Label of each id, in order of first appearance.
    pub labels: Vec<Label>,
    /// Size of each label (the largest over the operands: size-1 axes broadcast).
    pub sizes: Vec<usize>,
    /// Per operand, its label ids per axis (repeats kept, ellipsis expanded).
    pub inputs: Vec<Vec<usize>>,
    /// The output's label ids per axis (a label may repeat: `i->ii`).
    pub output: Vec<usize>,
}

/// Python's `repr` of a string (the quoting of NumPy-style messages).
pub fn py_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() => {
                let cp = c as u32;
                if cp <= 0xff {
                    out.push_str(&format!("\\x{cp:02x}"));
                } else {
                    out.push_str(&format!("\\u{cp:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

fn err(subscripts: &str, what: impl std::fmt::Display) -> Error {
    Error::einsum(
        "einsum",
        format!("subscripts {}: {what}", py_repr(subscripts)),
    )
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Tok {
    Ell,
    Char(char),
}

/// Labels of one term. `term` starts at `offset` of the whitespace-free subscripts; `place`
/// maps those positions to the given string.
fn parse_term(term: &[char], subscripts: &str, offset: usize, place: &[usize]) -> Result<Vec<Tok>> {
    let mut labels = Vec::with_capacity(term.len());
    let mut i = 0;
    while i < term.len() {
        let ch = term[i];
        let pos = place[offset + i];
        if ch == '.' {
            if term.get(i..i + 3) != Some(&['.', '.', '.'][..]) {
                return Err(err(
                    subscripts,
                    format!("invalid '.' at position {pos} (an ellipsis is exactly '...')"),
                ));
            }
            if labels.contains(&Tok::Ell) {
                return Err(err(
                    subscripts,
                    format!("more than one ellipsis in one term at position {pos}"),
                ));
            }
            labels.push(Tok::Ell);
            i += 3;
            continue;
        }
        if matches!(ch, ',' | '-' | '>') {
            return Err(err(
                subscripts,
                format!(
                    "invalid label {} at position {pos} (',', '-' and '>' only separate terms)",
                    py_repr(&ch.to_string())
                ),
            ));
        }
        labels.push(Tok::Char(ch));
        i += 1;
    }
    Ok(labels)
}

fn label_name(l: Label) -> String {
    match l {
        Label::Ell(_) => "ellipsis axis".to_string(),
        Label::Char(c) => format!("label {}", py_repr(&c.to_string())),
    }
}

/// Parse `subscripts` against the operands' `shapes`.
///
/// # Errors
/// [`Error::Einsum`] for malformed subscripts (a stray `.`, `-` or `>`, two `->`, two
/// ellipses in a term), an operand-count or rank mismatch, a label with two sizes, a repeated
/// label with unequal sizes, ellipsis axes missing from an explicit output, or an output label
/// absent from the inputs.
pub fn parse(subscripts: &str, shapes: &[&[usize]]) -> Result<Parsed> {
    let chars: Vec<char> = subscripts.chars().collect();
    let place: Vec<usize> = (0..chars.len())
        .filter(|&i| !chars[i].is_whitespace())
        .collect();
    let s: Vec<char> = place.iter().map(|&i| chars[i]).collect();
    let arrows: Vec<usize> = (0..s.len().saturating_sub(1))
        .filter(|&i| s[i] == '-' && s[i + 1] == '>')
        .collect();
    if arrows.len() > 1 {
        return Err(err(subscripts, "more than one '->'"));
    }
    let explicit = !arrows.is_empty();
    let (lhs, rhs): (&[char], &[char]) = match arrows.first() {
        Some(&a) => (&s[..a], &s[a + 2..]),
        None => (&s[..], &[]),
    };
    let terms: Vec<&[char]> = lhs.split(|&c| c == ',').collect();
    if terms.len() != shapes.len() {
        return Err(err(
            subscripts,
            format!(
                "{} input term(s) but {} operand(s)",
                terms.len(),
                shapes.len()
            ),
        ));
    }
    let mut raw = Vec::with_capacity(terms.len());
    let mut off = 0;
    for t in &terms {
        raw.push(parse_term(t, subscripts, off, &place)?);
        off += t.len() + 1;
    }
    let out_raw = if explicit {
        Some(parse_term(rhs, subscripts, lhs.len() + 2, &place)?)
    } else {
        None
    };

    let mut labels: Vec<Label> = Vec::new();
    let mut sizes: Vec<usize> = Vec::new();
    let mut first: Vec<usize> = Vec::new(); // the operand that set each size
    let mut ids: std::collections::HashMap<Label, usize> = std::collections::HashMap::new();
    let mut id_of = |labels: &mut Vec<Label>, l: Label| -> usize {
        *ids.entry(l).or_insert_with(|| {
            labels.push(l);
            labels.len() - 1
        })
    };
    let mut n_ell = 0usize;
    let mut inputs: Vec<Vec<usize>> = Vec::with_capacity(raw.len());
    for (k, (toks, shape)) in raw.iter().zip(shapes).enumerate() {
        let named = toks.iter().filter(|t| **t != Tok::Ell).count();
        let term: String = terms[k].iter().collect();
        let full: Vec<Label> = if let Some(p) = toks.iter().position(|t| *t == Tok::Ell) {
            if shape.len() < named {
                return Err(err(
                    subscripts,
                    format!(
                        "operand {k} has rank {} but term {} names {named} axes",
                        shape.len(),
                        py_repr(&term)
                    ),
                ));
            }
            let ne = shape.len() - named;
            n_ell = n_ell.max(ne);
            let tok = |t: &Tok| match t {
                Tok::Char(c) => Label::Char(*c),
                Tok::Ell => unreachable_ell(),
            };
            toks[..p]
                .iter()
                .map(tok)
                .chain((0..ne).rev().map(Label::Ell))
                .chain(toks[p + 1..].iter().map(tok))
                .collect()
        } else {
            if named != shape.len() {
                return Err(err(
                    subscripts,
                    format!(
                        "operand {k} has rank {} but term {} has {named} labels",
                        shape.len(),
                        py_repr(&term)
                    ),
                ));
            }
            toks.iter()
                .map(|t| match t {
                    Tok::Char(c) => Label::Char(*c),
                    Tok::Ell => unreachable_ell(),
                })
                .collect()
        };
        let mut ids = Vec::with_capacity(full.len());
        let mut mine: Vec<(usize, usize)> = Vec::new();
        for (&lab, &n) in full.iter().zip(shape.iter()) {
            let id = id_of(&mut labels, lab);
            if id == sizes.len() {
                sizes.push(n);
                first.push(k);
            } else if let Some(&(_, m)) = mine.iter().find(|(i, _)| *i == id) {
                if m != n {
                    return Err(err(
                        subscripts,
                        format!(
                            "{} repeated in operand {k} with sizes {m} and {n} (a diagonal needs \
                             equal sizes)",
                            label_name(lab)
                        ),
                    ));
                }
            } else if sizes[id] == 1 && n != 1 {
                sizes[id] = n;
                first[id] = k;
            } else if n != 1 && n != sizes[id] {
                return Err(err(
                    subscripts,
                    format!(
                        "{} has size {} in operand {} but {n} in operand {k}",
                        label_name(lab),
                        sizes[id],
                        first[id]
                    ),
                ));
            }
            if !mine.iter().any(|(i, _)| *i == id) {
                mine.push((id, n));
            }
            ids.push(id);
        }
        inputs.push(ids);
    }

    let ell_out: Vec<Label> = (0..n_ell).rev().map(Label::Ell).collect();
    let out_labels: Vec<Label> = if let Some(out_raw) = out_raw {
        let mut out = Vec::with_capacity(out_raw.len() + n_ell);
        let has_ell = out_raw.contains(&Tok::Ell);
        if !has_ell && n_ell > 0 {
            return Err(err(
                subscripts,
                format!("the operands have {n_ell} ellipsis axes but the output has no '...'"),
            ));
        }
        for t in &out_raw {
            match t {
                Tok::Ell => out.extend_from_slice(&ell_out),
                Tok::Char(c) => out.push(Label::Char(*c)),
            }
        }
        for t in &out_raw {
            if let Tok::Char(c) = t {
                if !ids.contains_key(&Label::Char(*c)) {
                    return Err(err(
                        subscripts,
                        format!(
                            "output label {} does not appear in any input term",
                            py_repr(&c.to_string())
                        ),
                    ));
                }
            }
        }
        out
    } else {
        let mut counts: std::collections::HashMap<char, usize> = std::collections::HashMap::new();
        for toks in &raw {
            for t in toks {
                if let Tok::Char(c) = t {
                    *counts.entry(*c).or_insert(0) += 1;
                }
            }
        }
        let mut once: Vec<char> = counts
            .into_iter()
            .filter(|&(_, n)| n == 1)
            .map(|(c, _)| c)
            .collect();
        once.sort_unstable();
        ell_out
            .into_iter()
            .chain(once.into_iter().map(Label::Char))
            .collect()
    };
    let output = out_labels
        .iter()
        .map(|l| {
            ids.get(l)
                .copied()
                .ok_or_else(|| Error::internal("einsum", "an output label without a size"))
        })
        .collect::<Result<Vec<usize>>>()?;
    Ok(Parsed {
        subscripts: subscripts.to_string(),
        labels,
        sizes,
        inputs,
        output,
    })
}

#[inline]
fn unreachable_ell() -> Label {
    // The ellipsis token is split off before labels are mapped; `Ell(usize::MAX)` is never
    // produced for a real term.
    Label::Ell(usize::MAX)
}

impl Parsed {
    /// The equation with ellipsis axes printed as `.` (`info.eq`).
    pub fn equation(&self) -> String {
        let fmt =
            |ids: &[usize]| -> String { ids.iter().map(|&i| self.labels[i].display()).collect() };
        let ins: Vec<String> = self.inputs.iter().map(|t| fmt(t)).collect();
        format!("{}->{}", ins.join(","), fmt(&self.output))
    }

    /// Format label ids as an equation term.
    pub fn term(&self, ids: &[usize]) -> String {
        ids.iter().map(|&i| self.labels[i].display()).collect()
    }
}
