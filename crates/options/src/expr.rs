//! `(expr)` arithmetic in option values, as fio allows (`size=(1024*1024)`, `bs=(4k*2)`).
//!
//! A small recursive-descent evaluator over `f64`: `+ - * / % ^`, unary minus and parentheses.
//! Number tokens may carry a unit suffix; the caller decides what a suffix means (a size
//! multiplier for sizes, an error elsewhere), so this module knows nothing of units.

/// Evaluates `text` (the part inside the outer parentheses is fine, as is the whole `(...)`).
/// `number` turns one token such as `4k` or `0x10` into a value.
pub(crate) fn eval(text: &str, number: &dyn Fn(&str) -> Result<f64, String>) -> Result<f64, String> {
    let mut p = Parser { s: text.as_bytes(), i: 0, number, depth: 0 };
    let v = p.sum()?;
    p.skip_ws();
    if p.i != p.s.len() {
        return Err(format!("unexpected '{}' in expression", &text[p.i..]));
    }
    if !v.is_finite() {
        return Err("expression does not give a finite number".into());
    }
    Ok(v)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    number: &'a dyn Fn(&str) -> Result<f64, String>,
    depth: usize,
}

impl Parser<'_> {
    fn skip_ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }
    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.s.get(self.i).copied()
    }
    fn sum(&mut self) -> Result<f64, String> {
        let mut v = self.product()?;
        while let Some(c @ (b'+' | b'-')) = self.peek() {
            self.i += 1;
            let r = self.product()?;
            v = if c == b'+' { v + r } else { v - r };
        }
        Ok(v)
    }
    fn product(&mut self) -> Result<f64, String> {
        let mut v = self.power()?;
        while let Some(c @ (b'*' | b'/' | b'%')) = self.peek() {
            self.i += 1;
            let r = self.power()?;
            v = match c {
                b'*' => v * r,
                _ if r == 0.0 => return Err("division by zero in expression".into()),
                b'/' => v / r,
                _ => v % r,
            };
        }
        Ok(v)
    }
    fn power(&mut self) -> Result<f64, String> {
        let base = self.unary()?;
        if self.peek() == Some(b'^') {
            self.i += 1;
            // Right-associative, as exponentiation usually is.
            let exp = self.power()?;
            return Ok(base.powf(exp));
        }
        Ok(base)
    }
    fn unary(&mut self) -> Result<f64, String> {
        match self.peek() {
            Some(b'-') => {
                self.i += 1;
                Ok(-self.unary()?)
            }
            Some(b'+') => {
                self.i += 1;
                self.unary()
            }
            _ => self.atom(),
        }
    }
    fn atom(&mut self) -> Result<f64, String> {
        match self.peek() {
            Some(b'(') => {
                // Bounded nesting keeps a hostile value from exhausting the stack.
                if self.depth >= 64 {
                    return Err("expression nested too deeply".into());
                }
                self.depth += 1;
                self.i += 1;
                let v = self.sum()?;
                if self.peek() != Some(b')') {
                    return Err("missing ')' in expression".into());
                }
                self.i += 1;
                self.depth -= 1;
                Ok(v)
            }
            Some(c) if c.is_ascii_alphanumeric() || c == b'.' => {
                let start = self.i;
                while self.i < self.s.len() && (self.s[self.i].is_ascii_alphanumeric() || self.s[self.i] == b'.') {
                    self.i += 1;
                }
                let tok = std::str::from_utf8(&self.s[start..self.i]).map_err(|e| e.to_string())?;
                (self.number)(tok)
            }
            Some(c) => Err(format!("unexpected '{}' in expression", c as char)),
            None => Err("expression ends too early".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(t: &str) -> Result<f64, String> {
        t.parse::<f64>().map_err(|_| format!("bad number '{t}'"))
    }

    #[test]
    fn arithmetic() {
        assert_eq!(eval("(1024*1024)", &plain).unwrap(), 1048576.0);
        assert_eq!(eval("2^10", &plain).unwrap(), 1024.0);
        assert_eq!(eval("(1+2)*3 - 4/2", &plain).unwrap(), 7.0);
        assert_eq!(eval("-(3)", &plain).unwrap(), -3.0);
        assert_eq!(eval("10 % 4", &plain).unwrap(), 2.0);
    }

    #[test]
    fn errors() {
        assert!(eval("(1+", &plain).is_err());
        assert!(eval("1/0", &plain).is_err());
        assert!(eval("1 2", &plain).is_err());
        assert!(eval(&"(".repeat(1000), &plain).is_err());
    }
}
