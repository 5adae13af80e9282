//! Constants a kernel declares but never reads are marked `[[maybe_unused]]`. A schedule's choices
//! leave some layout constants idle (B_STRIDE where B lives in registers, K3 in most passes), and
//! SHARED_BYTES and WORKSPACE_ELEMS are read only by a caller of `transform_block`; without the
//! attribute nvcc warns once per constant (#177-D) in a user's build of the export and clang with
//! -Wall likewise (-Wunused-const-variable). Keeping the constants keeps the layout readable and
//! the export's interface whole; the attribute is standard C++17, read by every compiler we target.
//!
//! The same holds for a kernel's parameters: every kernel takes the common list `(a, b, c,
//! workspace, nfuncs, nblocks)` so that one launcher serves every level, and a level that keeps its
//! intermediates in shared memory never reads `workspace` (the copy never reads `b`, the library
//! level not `a`). clang's -Wextra (-Wunused-parameter) warns once per such parameter in a user's
//! `hipcc -Wall -Wextra` build; those parameters are marked `[[maybe_unused]]` in the signature.

use std::collections::HashMap;

/// `source` with every `constexpr` declaration line that declares a name used nowhere else (in
/// code: comments do not count) prefixed by `[[maybe_unused]] `.
pub fn mark_unused_constants(source: &str) -> String {
    let mut uses: HashMap<&str, usize> = HashMap::new();
    for line in source.lines() {
        for word in identifiers(code_of(line)) {
            *uses.entry(word).or_default() += 1;
        }
    }
    let mut out = String::with_capacity(source.len() + 256);
    for line in source.split_inclusive('\n') {
        let code = code_of(line);
        let body = code.trim_start();
        if body.starts_with("constexpr ") {
            let here = identifiers(code).fold(HashMap::<&str, usize>::new(), |mut m, w| {
                *m.entry(w).or_default() += 1;
                m
            });
            let unused = declared_names(body).iter().any(|name| uses.get(name).copied().unwrap_or(0) <= here.get(name).copied().unwrap_or(0));
            if unused {
                let indent = line.len() - line.trim_start().len();
                out.push_str(&line[..indent]);
                out.push_str("[[maybe_unused]] ");
                out.push_str(&line[indent..]);
                continue;
            }
        }
        out.push_str(line);
    }
    out
}

/// `source` with each `__global__` kernel's parameters that its body never reads marked
/// `[[maybe_unused]]`. A kernel here is a one-line signature ending in `{` and a body that ends
/// at the next line that is a lone `}` in the first column (how the emitter writes every
/// kernel); a signature of another shape is left as it is.
pub fn mark_unused_kernel_parameters(source: &str) -> String {
    let lines: Vec<&str> = source.split_inclusive('\n').collect();
    let mut out = String::with_capacity(source.len() + 256);
    for (i, line) in lines.iter().enumerate() {
        match parameter_list(line) {
            Some((open, close)) if code_of(line).contains("__global__") => {
                let body_end = lines[i + 1..].iter().position(|l| l.trim_end() == "}").map_or(lines.len(), |n| i + 1 + n);
                let body: Vec<&str> = lines[i + 1..body_end].iter().flat_map(|l| identifiers(code_of(l))).collect();
                out.push_str(&line[..=open]);
                let params: Vec<String> = line[open + 1..close]
                    .split(',')
                    .map(|param| {
                        let name = identifiers(param).last().unwrap_or("");
                        let indent = param.len() - param.trim_start().len();
                        if name.is_empty() || body.contains(&name) || param.contains("[[maybe_unused]]") {
                            param.to_string()
                        } else {
                            format!("{}[[maybe_unused]] {}", &param[..indent], &param[indent..])
                        }
                    })
                    .collect();
                out.push_str(&params.join(","));
                out.push_str(&line[close..]);
            }
            _ => out.push_str(line),
        }
    }
    out
}

/// The byte offsets of the parentheses around a one-line signature's parameter list: the last
/// top-level `( .. )` before the `{` that ends the line (attributes such as `__launch_bounds__(..)`
/// come before the name, so they are never the last).
fn parameter_list(line: &str) -> Option<(usize, usize)> {
    let code = code_of(line).trim_end();
    let before_brace = code.strip_suffix('{')?.trim_end();
    let close = before_brace.len().checked_sub(1).filter(|&c| before_brace.as_bytes()[c] == b')')?;
    let mut depth = 0usize;
    for (i, b) in before_brace.bytes().enumerate().rev() {
        match b {
            b')' => depth += 1,
            b'(' => {
                depth -= 1;
                if depth == 0 {
                    return Some((i, close));
                }
            }
            _ => {}
        }
    }
    None
}

/// A line without its `//` comment.
fn code_of(line: &str) -> &str {
    line.find("//").map_or(line, |i| &line[..i])
}

fn identifiers(code: &str) -> impl Iterator<Item = &str> {
    code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|w| w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
}

/// The names a one-line `constexpr T A = ..., B = ...;` declares: in each comma-separated part,
/// the identifier right before its first lone `=`. (A comma inside an initializer can add a
/// part whose "name" is not one; such a name only ever adds an attribute, which is harmless.)
fn declared_names(declaration: &str) -> Vec<&str> {
    let Some(end) = declaration.find(';') else { return Vec::new() };
    declaration[..end]
        .split(',')
        .filter_map(|part| {
            let bytes = part.as_bytes();
            let eq = (0..bytes.len()).find(|&i| {
                bytes[i] == b'=' && bytes.get(i + 1) != Some(&b'=') && (i == 0 || !matches!(bytes[i - 1], b'=' | b'<' | b'>' | b'!'))
            })?;
            identifiers(&part[..eq]).last()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_constants_read_nowhere_else_are_marked() {
        let src = "namespace mra {\n\
                   constexpr int K = 10;  // K is read below\n\
                   constexpr int K2 = K * K;\n\
                   constexpr int K3 = K * K * K;\n\
                   constexpr int SHARED_BYTES = 0;\n\
                   // SHARED_BYTES is named in this comment only\n\
                   __global__ void k(double* a) { a[0] = K2; }\n\
                   }\n";
        let out = mark_unused_constants(src);
        assert!(out.contains("\nconstexpr int K = 10;"), "{out}");
        assert!(out.contains("\nconstexpr int K2 = K * K;"), "{out}");
        assert!(out.contains("\n[[maybe_unused]] constexpr int K3 = K * K * K;"), "{out}");
        assert!(out.contains("\n[[maybe_unused]] constexpr int SHARED_BYTES = 0;"), "{out}");
        // Nothing else changes.
        assert_eq!(out.replace("[[maybe_unused]] ", ""), src);
    }

    #[test]
    fn indentation_and_several_declarators() {
        let src = "    constexpr int FM = 16, FN = 8, FK = 4;\n    int x = FM * FK;\n    constexpr bool EQ = (FM == 16);\n    int y = EQ;\n";
        let out = mark_unused_constants(src);
        // FN is read nowhere: the declaration (which holds it) is marked, its indentation kept.
        assert!(out.starts_with("    [[maybe_unused]] constexpr int FM = 16, FN = 8, FK = 4;\n"), "{out}");
        // `==` in an initializer is no declarator; EQ is read.
        assert!(out.contains("\n    constexpr bool EQ = (FM == 16);\n"), "{out}");
        assert_eq!(declared_names("constexpr int FM = 16, FN = 8, FK = 4;"), ["FM", "FN", "FK"]);
        assert_eq!(declared_names("constexpr long long W = (A <= B) ? 1 : 2;"), ["W"]);
    }

    #[test]
    fn kernel_parameters_read_nowhere_in_the_body_are_marked() {
        let src = "__device__ void f(double* workspace) {\n    (void)workspace;\n}\n\
                   extern \"C\" __global__ void __launch_bounds__(256, 1) k(const double* __restrict__ a, const double* __restrict__ b, double* __restrict__ c, double* workspace, int nfuncs, int nblocks) {\n\
                   \x20   // b and workspace are named in this comment only\n\
                   \x20   for (int n = 0; n < nfuncs; n += nblocks) { c[n] = a[n]; }\n\
                   }\n\
                   __global__ void other(double* workspace) {\n    workspace[0] = 1;\n}\n";
        let out = mark_unused_kernel_parameters(src);
        assert!(
            out.contains("k(const double* __restrict__ a, [[maybe_unused]] const double* __restrict__ b, double* __restrict__ c, [[maybe_unused]] double* workspace, int nfuncs, int nblocks) {\n"),
            "{out}"
        );
        // A device function is not a kernel; a kernel that reads its parameter keeps it plain.
        assert!(out.starts_with("__device__ void f(double* workspace) {\n"), "{out}");
        assert!(out.contains("__global__ void other(double* workspace) {\n"), "{out}");
        assert_eq!(out.replace("[[maybe_unused]] ", ""), src);
        // Marking twice changes nothing.
        assert_eq!(mark_unused_kernel_parameters(&out), out);
        assert_eq!(parameter_list("extern \"C\" __global__ void __attribute__((x(1, 2))) k(int a) {\n"), Some((53, 59)));
    }
}
