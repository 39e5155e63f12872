//! JSON as rt-app accepts it: `//` and `/* */` comments, and keys that repeat in one object
//! (`"run": 10, "sleep": 5, "run": 20` is a sequence of three events), kept in file order.
//! Every value remembers its line, so that errors can point at it.

use std::fmt;

/// A JSON value with the line it starts on.
#[derive(Clone, Debug, PartialEq)]
pub struct Json {
    /// 1-based line of the value's first character.
    pub line: usize,
    /// The value.
    pub value: Value,
}

/// A JSON value; objects keep their keys in order, repeats included.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number (integers up to 2^53 are exact), and whether json-c, the parser rt-app reads
    /// its files with, types it as an integer: written without `.`, `e` or `E` (json-c's
    /// `json_tokener.c` makes any other number a double, which rt-app's integer fields refuse).
    Number {
        /// Its value.
        value: f64,
        /// Written as an integer.
        integer: bool,
    },
    /// A string.
    Str(String),
    /// An array.
    Array(Vec<Json>),
    /// An object: (key, value) in file order.
    Object(Vec<(String, Json)>),
}

impl Value {
    /// What kind of value this is, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number { .. } => "a number",
            Value::Str(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        }
    }
}

/// A syntax error: the line and what was expected.
#[derive(Clone, Debug, PartialEq)]
pub struct SyntaxError {
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// Deepest nesting accepted (a hostile file cannot exhaust the stack).
const MAX_DEPTH: usize = 64;

/// Parses `text` as one JSON value (with comments), followed only by blanks and comments.
pub fn parse(text: &str) -> Result<Json, SyntaxError> {
    let mut p = Parser {
        bytes: text.as_bytes(),
        at: 0,
        line: 1,
    };
    let v = p.value(0)?;
    p.blank()?;
    if p.at < p.bytes.len() {
        return Err(p.error("text after the end of the document"));
    }
    Ok(v)
}

struct Parser<'a> {
    bytes: &'a [u8],
    at: usize,
    line: usize,
}

impl Parser<'_> {
    fn error(&self, message: impl Into<String>) -> SyntaxError {
        SyntaxError {
            line: self.line,
            message: message.into(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn bump(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.at += 1;
        if b == b'\n' {
            self.line += 1;
        }
        Some(b)
    }

    /// Skips white space and comments.
    fn blank(&mut self) -> Result<(), SyntaxError> {
        loop {
            match (self.peek(), self.bytes.get(self.at + 1).copied()) {
                (Some(b' ' | b'\t' | b'\r' | b'\n'), _) => {
                    self.bump();
                }
                (Some(b'/'), Some(b'/')) => {
                    while self.peek().is_some_and(|b| b != b'\n') {
                        self.bump();
                    }
                }
                (Some(b'/'), Some(b'*')) => {
                    let start = self.line;
                    self.at += 2;
                    loop {
                        match self.bump() {
                            None => {
                                return Err(SyntaxError {
                                    line: start,
                                    message: "a /* comment is never closed".into(),
                                })
                            }
                            Some(b'*') if self.peek() == Some(b'/') => {
                                self.bump();
                                break;
                            }
                            Some(_) => {}
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json, SyntaxError> {
        if depth > MAX_DEPTH {
            return Err(self.error(format!("nested more than {MAX_DEPTH} deep")));
        }
        self.blank()?;
        let line = self.line;
        let value = match self.peek() {
            None => return Err(self.error("the document ends where a value was expected")),
            Some(b'{') => self.object(depth)?,
            Some(b'[') => self.array(depth)?,
            Some(b'"') => Value::Str(self.string()?),
            Some(b't') => self.word("true", Value::Bool(true))?,
            Some(b'f') => self.word("false", Value::Bool(false))?,
            Some(b'n') => self.word("null", Value::Null)?,
            Some(b'-' | b'0'..=b'9') => self.number()?,
            Some(c) => return Err(self.error(format!("unexpected character `{}`", c as char))),
        };
        Ok(Json { line, value })
    }

    fn word(&mut self, word: &str, value: Value) -> Result<Value, SyntaxError> {
        if self.bytes[self.at..].starts_with(word.as_bytes()) {
            self.at += word.len();
            Ok(value)
        } else {
            Err(self.error("expected a value (true, false, null, a number, a string)"))
        }
    }

    fn number(&mut self) -> Result<Value, SyntaxError> {
        let start = self.at;
        while self
            .peek()
            .is_some_and(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E'))
        {
            self.at += 1;
        }
        let text = std::str::from_utf8(&self.bytes[start..self.at]).unwrap_or("");
        let integer = !text.contains(['.', 'e', 'E']);
        match text.parse::<f64>() {
            Ok(value) if value.is_finite() => Ok(Value::Number { value, integer }),
            _ => Err(self.error(format!("`{text}` is not a number"))),
        }
    }

    fn string(&mut self) -> Result<String, SyntaxError> {
        let line = self.line;
        self.bump();
        let mut out = Vec::new();
        loop {
            match self.bump() {
                None | Some(b'\n') => {
                    return Err(SyntaxError {
                        line,
                        message: "a string is never closed".into(),
                    })
                }
                Some(b'"') => break,
                Some(b'\\') => {
                    let c = match self.bump() {
                        Some(b'n') => b'\n',
                        Some(b't') => b'\t',
                        Some(b'r') => b'\r',
                        Some(b'b') => 0x08,
                        Some(b'f') => 0x0c,
                        Some(c @ (b'"' | b'\\' | b'/')) => c,
                        Some(b'u') => {
                            let ch = self.unicode_escape()?;
                            out.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes());
                            continue;
                        }
                        _ => return Err(self.error("an unknown escape in a string")),
                    };
                    out.push(c);
                }
                Some(c) => out.push(c),
            }
        }
        String::from_utf8(out).map_err(|_| self.error("a string is not UTF-8"))
    }

    /// The character of a `\uXXXX` escape (its `\u` read), a surrogate pair's two escapes
    /// taken together as JSON writes a character past U+FFFF.
    fn unicode_escape(&mut self) -> Result<char, SyntaxError> {
        let high = self.hex4()?;
        let code = if (0xd800..0xdc00).contains(&high) {
            if self.bump() != Some(b'\\') || self.bump() != Some(b'u') {
                return Err(self.error("a `\\u` escape of a high surrogate without its low one"));
            }
            let low = self.hex4()?;
            if !(0xdc00..0xe000).contains(&low) {
                return Err(self.error("a `\\u` escape of a high surrogate without its low one"));
            }
            0x10000 + ((high - 0xd800) << 10) + (low - 0xdc00)
        } else {
            high
        };
        char::from_u32(code).ok_or_else(|| self.error("a `\\u` escape that is no character"))
    }

    /// Four hexadecimal digits.
    fn hex4(&mut self) -> Result<u32, SyntaxError> {
        let mut v = 0;
        for _ in 0..4 {
            let d = self
                .bump()
                .and_then(|c| (c as char).to_digit(16))
                .ok_or_else(|| self.error("a `\\u` escape needs four hexadecimal digits"))?;
            v = v * 16 + d;
        }
        Ok(v)
    }

    fn array(&mut self, depth: usize) -> Result<Value, SyntaxError> {
        self.bump();
        let mut items = Vec::new();
        loop {
            self.blank()?;
            if self.peek() == Some(b']') {
                self.bump();
                return Ok(Value::Array(items));
            }
            items.push(self.value(depth + 1)?);
            self.blank()?;
            match self.bump() {
                Some(b',') => {}
                Some(b']') => return Ok(Value::Array(items)),
                _ => return Err(self.error("expected `,` or `]` in an array")),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, SyntaxError> {
        self.bump();
        let mut fields = Vec::new();
        loop {
            self.blank()?;
            match self.peek() {
                Some(b'}') => {
                    self.bump();
                    return Ok(Value::Object(fields));
                }
                Some(b'"') => {}
                _ => return Err(self.error("expected a key (a string) or `}` in an object")),
            }
            let key = self.string()?;
            self.blank()?;
            if self.bump() != Some(b':') {
                return Err(self.error(format!("expected `:` after the key `{key}`")));
            }
            let value = self.value(depth + 1)?;
            fields.push((key, value));
            self.blank()?;
            match self.bump() {
                Some(b',') => {}
                Some(b'}') => return Ok(Value::Object(fields)),
                _ => return Err(self.error("expected `,` or `}` in an object")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_repeated_keys_and_lines_are_kept() {
        let text =
            "/* a load */\n{\n  \"run\": 10, // first\n  \"sleep\": 5,\n  \"run\": 20.5\n}\n";
        let doc = parse(text).unwrap();
        let Value::Object(fields) = doc.value else {
            panic!("an object")
        };
        let keys: Vec<&str> = fields.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["run", "sleep", "run"]);
        assert_eq!(
            fields[2].1.value,
            Value::Number {
                value: 20.5,
                integer: false
            }
        );
        assert_eq!(
            fields[0].1.value,
            Value::Number {
                value: 10.0,
                integer: true
            }
        );
        assert_eq!(fields[2].1.line, 5);
        assert_eq!(doc.line, 2);
    }

    #[test]
    fn malformed_documents_name_their_line() {
        for (text, line) in [
            ("{\n\"a\": 1,\n\"b\" 2}", 3),
            ("{\"a\": [1, 2}", 1),
            ("{\n\n\"a\": \"x}", 3),
            ("/* never closed", 1),
            ("{} {}", 1),
            ("{\"a\": 1e999}", 1),
        ] {
            let e = parse(text).unwrap_err();
            assert_eq!(e.line, line, "{text}: {e}");
        }
        let deep = "[".repeat(100) + &"]".repeat(100);
        assert!(parse(&deep).unwrap_err().message.contains("nested"));
    }
}
