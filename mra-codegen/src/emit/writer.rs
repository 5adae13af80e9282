//! A small indenting line writer, so the generated C++ reads like code a person wrote.

#[derive(Default)]
pub struct Writer {
    out: String,
    depth: usize,
}

impl Writer {
    /// One line at the current indentation (an empty `line` gives an empty line).
    pub fn line(&mut self, line: impl AsRef<str>) -> &mut Self {
        let line = line.as_ref();
        if !line.is_empty() {
            for _ in 0..self.depth {
                self.out.push_str("    ");
            }
            self.out.push_str(line);
        }
        self.out.push('\n');
        self
    }

    /// Several lines (a block of text), each indented.
    pub fn lines(&mut self, text: &str) -> &mut Self {
        for l in text.lines() {
            self.line(l);
        }
        self
    }

    /// `head {`, then the body one level deeper, then `}` + `tail` (an empty `head`: a bare
    /// scope).
    pub fn block(&mut self, head: impl AsRef<str>, tail: &str, body: impl FnOnce(&mut Self)) -> &mut Self {
        self.line(if head.as_ref().is_empty() { "{".to_string() } else { format!("{} {{", head.as_ref()) });
        self.depth += 1;
        body(self);
        self.depth -= 1;
        self.line(format!("}}{tail}"))
    }

    /// One level deeper, for a block written piece by piece (closed by [`Writer::dedent`]).
    pub fn indent(&mut self) {
        self.depth += 1;
    }

    pub fn dedent(&mut self) {
        self.depth -= 1;
    }

    pub fn finish(self) -> String {
        self.out
    }
}
