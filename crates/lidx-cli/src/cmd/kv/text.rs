//! The text form of `lidx kv`'s keys and values, and the record files `kv scan` writes and
//! `kv load` reads (issue 30, class 7: a dump must load back byte for byte).
//!
//! # One key or value
//! Every `kv` subcommand (get, put, del, scan, load) reads and writes a key or value the same
//! way, by one of two encodings:
//! - **text** (the default): UTF-8 text; a byte that is not printable UTF-8 is escaped.
//!   Written: `\\` for a backslash, `\t`, `\n`, `\r` for tab, newline and carriage return,
//!   `\xNN` (two hex digits) for any other control character and for every byte that is not
//!   part of valid UTF-8; everything else as it is (quotes, commas and non-ASCII letters
//!   included). Read: the same escapes, plus `\'` and `\"` (written by lidx before issue 30);
//!   any other backslash is an error naming the line and byte, never taken literally, so
//!   `C:\dir` is refused and `C:\\dir` is the key `C:\dir`.
//! - **hex** (`--hex`, for exact bytes without any escaping): two hex digits a byte, written
//!   lowercase, read in either case; an empty value is an empty string.
//!
//! A store of `u64` keys takes and shows its keys as decimal numbers in both encodings (so
//! its dump loads back into a new store created with `kv load --keys u64`).
//!
//! # Record files
//! - `tsv`: `key<TAB>value` a line. Tabs and newlines inside a key or value are always
//!   escaped (or hex), so a line has exactly one tab; another count is an error.
//! - `csv`: `key,value` records read and written by the `csv` crate: a field holding a comma,
//!   a quote or a line break is quoted (`"a,b"`, quotes doubled), and the escapes above apply
//!   inside the field as everywhere else.
//! - `jsonl`: one JSON object a line, `{"key": ..., "value": ...}`, both strings in the
//!   encoding above (a `u64` key may also be a JSON number); what `kv scan --json` prints.
//! - `txt` (load only): one key a line, empty values.
//! - `sosd` (load only): the SOSD binary of u64 keys, empty values.
//!
//! Lines end with `\n` or `\r\n`. A blank line is skipped (no record can be blank: a key is
//! at least one byte), and so is the first line of a `tsv`, `csv` or `txt` file read with
//! `--header`. `kv scan --header` writes the header line `key<TAB>value` (`key,value`).
//! Every file `kv scan --format F` writes, `kv load --format F` reads back to the same bytes.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::io::{BufRead, Read, Write};
use std::rc::Rc;

use anyhow::{bail, Context};
use lidx::kv::{KeyFormat, OrderedKey};

/// How a key or value is written as text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// UTF-8 with escapes (see the module docs).
    Text,
    /// Two hex digits a byte.
    Hex,
}

/// The escaped text of `bytes` (the module docs give the escapes).
pub fn escape(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\t' => out.push_str("\\t"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                c if c.is_control() => {
                    let mut buf = [0; 4];
                    for b in c.encode_utf8(&mut buf).bytes() {
                        out.push_str(&format!("\\x{b:02x}"));
                    }
                }
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

/// The bytes of escaped `text`, or a message naming the byte of a bad escape.
pub fn unescape(text: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if text[i] != b'\\' {
            out.push(text[i]);
            i += 1;
            continue;
        }
        let (b, n) = match text.get(i + 1) {
            Some(b'\\') => (b'\\', 2),
            Some(b't') => (b'\t', 2),
            Some(b'n') => (b'\n', 2),
            Some(b'r') => (b'\r', 2),
            Some(b'\'') => (b'\'', 2),
            Some(b'"') => (b'"', 2),
            Some(b'x') => match text.get(i + 2..i + 4).and_then(hex_byte) {
                Some(b) => (b, 4),
                None => return Err(bad_escape(i)),
            },
            _ => return Err(bad_escape(i)),
        };
        out.push(b);
        i += n;
    }
    Ok(out)
}

fn bad_escape(at: usize) -> String {
    format!(
        "a bad escape at byte {at}: a backslash starts \\\\, \\t, \\n, \\r, \\xNN, \\' or \\\" \
         (write a backslash as \\\\, or give exact bytes with --hex)"
    )
}

fn hex_byte(two: &[u8]) -> Option<u8> {
    std::str::from_utf8(two)
        .ok()
        .and_then(|s| u8::from_str_radix(s, 16).ok())
}

/// Lowercase hex of `bytes`.
pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The bytes of hex `text`, or a message saying what is wrong.
pub fn from_hex(text: &[u8]) -> Result<Vec<u8>, String> {
    if !text.len().is_multiple_of(2) {
        return Err(format!(
            "{} hex digits: hex gives two digits a byte",
            text.len()
        ));
    }
    text.chunks(2)
        .enumerate()
        .map(|(i, two)| {
            hex_byte(two).ok_or_else(|| format!("byte {} is not two hex digits", 2 * i))
        })
        .collect()
}

/// How one store's keys and values are read and written as text.
#[derive(Clone, Copy, Debug)]
pub struct Codec {
    /// The store's keys: `u64` keys are decimal numbers whatever the encoding.
    pub keys: KeyFormat,
    /// The encoding of byte keys and of values.
    pub encoding: Encoding,
}

impl Codec {
    /// The text of `bytes` in this codec's encoding.
    pub fn show(&self, bytes: &[u8]) -> String {
        match self.encoding {
            Encoding::Text => escape(bytes),
            Encoding::Hex => to_hex(bytes),
        }
    }

    /// The text of a key.
    pub fn show_key(&self, key: &[u8]) -> String {
        match self.keys {
            KeyFormat::U64 => {
                u64::from_ordered_bytes(key).map_or_else(|| self.show(key), |k| k.to_string())
            }
            KeyFormat::Bytes => self.show(key),
        }
    }

    /// The bytes of a value's (or byte key's) `text`.
    pub fn parse(&self, text: &[u8]) -> Result<Vec<u8>, String> {
        match self.encoding {
            Encoding::Text => unescape(text),
            Encoding::Hex => from_hex(text),
        }
    }

    /// The bytes of a key's `text`.
    pub fn parse_key(&self, text: &[u8]) -> Result<Vec<u8>, String> {
        match self.keys {
            KeyFormat::U64 => std::str::from_utf8(text)
                .ok()
                .and_then(|t| t.trim().parse::<u64>().ok())
                .map(|k| k.ordered_bytes())
                .ok_or_else(|| {
                    format!(
                        "this store holds u64 keys; {:?} is not a number from 0 to 2^64-1",
                        String::from_utf8_lossy(text)
                    )
                }),
            KeyFormat::Bytes => self.parse(text),
        }
    }

    /// The bytes of a command-line key argument (`what` names it in the error).
    pub fn key_arg(&self, what: &str, text: &str) -> anyhow::Result<Vec<u8>> {
        self.parse_key(text.as_bytes())
            .map_err(|e| anyhow::anyhow!("{what} {text:?}: {e}"))
    }

    /// The bytes of a command-line value argument.
    pub fn value_arg(&self, text: &str) -> anyhow::Result<Vec<u8>> {
        self.parse(text.as_bytes())
            .map_err(|e| anyhow::anyhow!("value {text:?}: {e}"))
    }
}

/// The record files `kv scan` writes and `kv load` reads (the module docs say each).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum RecordFormat {
    /// `key<TAB>value` a line.
    Tsv,
    /// `key,value` records, quoted where needed.
    Csv,
    /// One JSON object a line: `{"key": ..., "value": ...}`.
    Jsonl,
    /// One key a line, empty values (load only).
    Txt,
    /// SOSD binary u64 keys, empty values (load only).
    Sosd,
}

impl RecordFormat {
    /// The format a file's extension names.
    pub fn of_extension(ext: &str) -> Option<RecordFormat> {
        Some(match ext {
            "tsv" => RecordFormat::Tsv,
            "csv" => RecordFormat::Csv,
            "jsonl" => RecordFormat::Jsonl,
            "txt" => RecordFormat::Txt,
            "sosd" => RecordFormat::Sosd,
            _ => return None,
        })
    }

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            RecordFormat::Tsv => "tsv",
            RecordFormat::Csv => "csv",
            RecordFormat::Jsonl => "jsonl",
            RecordFormat::Txt => "txt",
            RecordFormat::Sosd => "sosd",
        }
    }
}

/// Refuses what `kv scan` cannot write: a format without values (`txt`, `sosd`), or a header
/// on a `jsonl` file (whose lines name their fields); the error says what it can write.
pub fn check_writable(format: RecordFormat, header: bool) -> Result<(), String> {
    match format {
        RecordFormat::Txt | RecordFormat::Sosd => Err(format!(
            "tsv, csv or jsonl: kv scan does not write {} (which has no values)",
            format.name()
        )),
        RecordFormat::Jsonl if header => {
            Err("tsv or csv with --header: a jsonl line names its fields".to_string())
        }
        _ => Ok(()),
    }
}

/// Writes records as `kv scan` prints them.
pub struct RecordWriter<W: Write> {
    out: Out<W>,
    codec: Codec,
}

enum Out<W: Write> {
    Lines(W, RecordFormat),
    Csv(Box<csv::Writer<W>>),
}

impl<W: Write> RecordWriter<W> {
    /// A writer of `format` (`tsv`, `csv` or `jsonl`) to `out`, with a header line first when
    /// `header` (not for `jsonl`, whose fields are named on every line).
    pub fn new(
        out: W,
        format: RecordFormat,
        codec: Codec,
        header: bool,
    ) -> anyhow::Result<RecordWriter<W>> {
        check_writable(format, header).map_err(|e| anyhow::anyhow!("{e}"))?;
        let mut out = match format {
            RecordFormat::Csv => Out::Csv(Box::new(csv::WriterBuilder::new().from_writer(out))),
            _ => Out::Lines(out, format),
        };
        if header {
            match &mut out {
                Out::Csv(w) => w.write_record(["key", "value"])?,
                Out::Lines(w, _) => w.write_all(b"key\tvalue\n")?,
            }
        }
        Ok(RecordWriter { out, codec })
    }

    /// Writes one record.
    pub fn write(&mut self, key: &[u8], value: &[u8]) -> std::io::Result<()> {
        let (k, v) = (self.codec.show_key(key), self.codec.show(value));
        match &mut self.out {
            Out::Csv(w) => w.write_record([k, v]).map_err(std::io::Error::from),
            Out::Lines(w, RecordFormat::Tsv) => writeln!(w, "{k}\t{v}"),
            Out::Lines(w, _) => writeln!(w, "{}", serde_json::json!({"key": k, "value": v})),
        }
    }

    /// Flushes what is buffered.
    pub fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.out {
            Out::Csv(w) => w.flush(),
            Out::Lines(w, _) => w.flush(),
        }
    }
}

/// One record read from a file: the line it starts on, its key and value.
#[derive(Debug, PartialEq, Eq)]
pub struct Record {
    /// 1-based line of the file where the record starts.
    pub line: u64,
    /// The key's bytes.
    pub key: Vec<u8>,
    /// The value's bytes.
    pub value: Vec<u8>,
}

/// A bad record: the line it starts on and what is wrong with it.
#[derive(Debug)]
pub struct BadRecord {
    /// 1-based line of the file.
    pub line: u64,
    /// What is wrong, and what to do.
    pub what: String,
}

/// Reads the records of a `tsv`, `csv`, `jsonl` or `txt` file: one item per record, an
/// `Err` for a line that is not one (the reader goes on after it only if asked again). I/O
/// errors are `Err(anyhow)` through [`RecordReader::next_record`].
pub struct RecordReader<R: BufRead> {
    input: In<R>,
    codec: Codec,
    format: RecordFormat,
    header: bool,
}

enum In<R: BufRead> {
    Lines {
        reader: R,
        line_no: u64,
        buf: Vec<u8>,
    },
    Csv(csv::Reader<LineCounter<R>>, csv::ByteRecord, Lines),
}

/// Where the newlines of a CSV input are, to give a record's line: the `csv` crate's own line
/// numbers leave out the blank lines it skips, which would send a user resuming a load to the
/// wrong line.
type Lines = Rc<RefCell<NewlineIndex>>;

/// Newline offsets not yet passed by a record, and how many were passed.
#[derive(Default)]
struct NewlineIndex {
    offsets: VecDeque<u64>,
    passed: u64,
}

impl NewlineIndex {
    /// The 1-based line of the byte at `offset`; offsets asked for never decrease.
    fn line_of(&mut self, offset: u64) -> u64 {
        while self.offsets.front().is_some_and(|&n| n < offset) {
            self.offsets.pop_front();
            self.passed += 1;
        }
        self.passed + 1
    }
}

/// A reader that notes where each newline is, in a [`NewlineIndex`].
struct LineCounter<R> {
    inner: R,
    at: u64,
    lines: Lines,
}

impl<R: Read> Read for LineCounter<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let mut lines = self.lines.borrow_mut();
        for (i, _) in buf[..n].iter().enumerate().filter(|(_, &b)| b == b'\n') {
            lines.offsets.push_back(self.at + i as u64);
        }
        self.at += n as u64;
        Ok(n)
    }
}

impl<R: BufRead> RecordReader<R> {
    /// A reader of `format` from `input`; with `header`, the first line (or CSV record) is
    /// skipped.
    pub fn new(
        input: R,
        format: RecordFormat,
        codec: Codec,
        header: bool,
    ) -> anyhow::Result<RecordReader<R>> {
        let input = match format {
            RecordFormat::Csv => {
                let lines = Lines::default();
                let counter = LineCounter {
                    inner: input,
                    at: 0,
                    lines: Rc::clone(&lines),
                };
                In::Csv(
                    csv::ReaderBuilder::new()
                        .has_headers(header)
                        .flexible(true)
                        .from_reader(counter),
                    csv::ByteRecord::new(),
                    lines,
                )
            }
            RecordFormat::Tsv | RecordFormat::Txt => In::Lines {
                reader: input,
                line_no: 0,
                buf: Vec::new(),
            },
            RecordFormat::Jsonl if !header => In::Lines {
                reader: input,
                line_no: 0,
                buf: Vec::new(),
            },
            RecordFormat::Jsonl => bail!("a jsonl file has no header: its fields are named"),
            RecordFormat::Sosd => bail!("an SOSD file is binary: it has no records of text"),
        };
        Ok(RecordReader {
            input,
            codec,
            format,
            header,
        })
    }

    /// The next record, `Ok(None)` at the end of the input; a bad record is
    /// `Ok(Some(Err(..)))`, a failure to read is `Err`.
    pub fn next_record(&mut self) -> anyhow::Result<Option<Result<Record, BadRecord>>> {
        let codec = self.codec;
        match &mut self.input {
            In::Csv(reader, record, lines) => {
                let more = reader.read_byte_record(record).map_err(|e| {
                    let line = e
                        .position()
                        .map_or(0, |p| lines.borrow_mut().line_of(p.byte()));
                    anyhow::anyhow!("line {line}: {e}")
                })?;
                if !more {
                    return Ok(None);
                }
                // The record's last byte (its terminator, or the input's last byte) is on its
                // last line; the line breaks inside its quoted fields lead back to its first.
                // Its start would not do: it lies before the blank lines the crate skips.
                let end = reader.position().byte().saturating_sub(1);
                let inside = record.as_slice().iter().filter(|&&b| b == b'\n').count() as u64;
                let line = lines.borrow_mut().line_of(end) - inside;
                if record.len() != 2 {
                    return Ok(Some(Err(BadRecord {
                        line,
                        what: format!(
                            "{} field(s); a CSV record is key,value (quote a field that \
                             holds a comma: \"a,b\")",
                            record.len()
                        ),
                    })));
                }
                Ok(Some(pair(codec, line, &record[0], &record[1])))
            }
            In::Lines {
                reader,
                line_no,
                buf,
            } => loop {
                buf.clear();
                if reader.read_until(b'\n', buf).context("reading the input")? == 0 {
                    return Ok(None);
                }
                *line_no += 1;
                let mut text: &[u8] = buf;
                if let Some(t) = text.strip_suffix(b"\n") {
                    text = t;
                }
                if let Some(t) = text.strip_suffix(b"\r") {
                    text = t;
                }
                if text.is_empty() || (self.header && *line_no == 1) {
                    continue;
                }
                let line = *line_no;
                return Ok(Some(match self.format {
                    RecordFormat::Tsv => {
                        let fields: Vec<&[u8]> = text.split(|&b| b == b'\t').collect();
                        match fields[..] {
                            [k, v] => pair(codec, line, k, v),
                            _ => Err(BadRecord {
                                line,
                                what: format!(
                                    "{} field(s); a TSV line is key<TAB>value, with a tab \
                                     inside a key or value written \\t",
                                    fields.len()
                                ),
                            }),
                        }
                    }
                    RecordFormat::Jsonl => json_pair(codec, line, text),
                    _ => pair(codec, line, text, b""),
                }));
            },
        }
    }
}

fn pair(codec: Codec, line: u64, key: &[u8], value: &[u8]) -> Result<Record, BadRecord> {
    let bad = |what: &str, e: String| BadRecord {
        line,
        what: format!("the {what}: {e}"),
    };
    Ok(Record {
        line,
        key: codec.parse_key(key).map_err(|e| bad("key", e))?,
        value: codec.parse(value).map_err(|e| bad("value", e))?,
    })
}

fn json_pair(codec: Codec, line: u64, text: &[u8]) -> Result<Record, BadRecord> {
    let bad = |what: String| BadRecord { line, what };
    let object: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(text).map_err(|e| bad(format!("not a JSON object ({e})")))?;
    let field = |name: &str| match object.get(name) {
        Some(serde_json::Value::String(s)) => Ok(s.clone()),
        Some(serde_json::Value::Number(n)) if name == "key" && codec.keys == KeyFormat::U64 => {
            Ok(n.to_string())
        }
        _ => Err(bad(format!(
            "no string field {name:?}; a jsonl line is {{\"key\": \"...\", \"value\": \"...\"}}"
        ))),
    };
    let (key, value) = (field("key")?, field("value")?);
    pair(codec, line, key.as_bytes(), value.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const TEXT: Codec = Codec {
        keys: KeyFormat::Bytes,
        encoding: Encoding::Text,
    };

    fn round_trip(
        codec: Codec,
        format: RecordFormat,
        header: bool,
        records: &[(Vec<u8>, Vec<u8>)],
    ) {
        let mut out = Vec::new();
        let mut w = RecordWriter::new(&mut out, format, codec, header).unwrap();
        for (k, v) in records {
            w.write(k, v).unwrap();
        }
        w.flush().unwrap();
        drop(w);
        let mut r = RecordReader::new(&out[..], format, codec, header).unwrap();
        let mut back = Vec::new();
        while let Some(rec) = r.next_record().unwrap() {
            let rec = rec.unwrap_or_else(|e| panic!("line {}: {}", e.line, e.what));
            back.push((rec.key, rec.value));
        }
        assert_eq!(
            back,
            records,
            "{format:?} {codec:?}: {}",
            String::from_utf8_lossy(&out)
        );
    }

    #[test]
    fn escapes_are_the_ones_documented() {
        assert_eq!(escape(b"tab\there"), "tab\\there");
        assert_eq!(escape(b"C:\\dir"), "C:\\\\dir");
        assert_eq!(escape(b"bin\xff\x00"), "bin\\xff\\x00");
        assert_eq!(
            escape("caf\u{e9} \"a,b\" 'q'".as_bytes()),
            "caf\u{e9} \"a,b\" 'q'"
        );
        assert_eq!(escape("\u{85}".as_bytes()), "\\xc2\\x85");
        assert_eq!(unescape(b"a\\'b\\\"").unwrap(), b"a'b\"");
        assert!(unescape(b"C:\\dir").unwrap_err().contains("byte 2"));
        assert!(unescape(b"x\\x4").is_err());
        assert!(from_hex(b"abc").is_err());
        assert!(from_hex(b"zz").is_err());
        assert_eq!(from_hex(b"00FFa0").unwrap(), [0, 255, 160]);
    }

    #[test]
    fn quoted_csv_headers_and_blank_lines() {
        let input = b"key,value\n\"a,b\",1\n\n\"say \"\"hi\"\"\",C:\\\\dir\r\n\"multi\n\nline\",x\n\nlast\n";
        let mut r = RecordReader::new(&input[..], RecordFormat::Csv, TEXT, true).unwrap();
        let mut got = Vec::new();
        while let Some(Ok(rec)) = r.next_record().unwrap() {
            got.push((rec.line, rec.key, rec.value));
        }
        assert_eq!(
            got,
            [
                (2, b"a,b".to_vec(), b"1".to_vec()),
                (4, b"say \"hi\"".to_vec(), b"C:\\dir".to_vec()),
                (5, b"multi\n\nline".to_vec(), b"x".to_vec()),
            ]
        );
        let mut r = RecordReader::new(&input[..], RecordFormat::Csv, TEXT, true).unwrap();
        let bad = std::iter::from_fn(|| r.next_record().unwrap())
            .find_map(Result::err)
            .unwrap();
        assert_eq!(bad.line, 9, "{}", bad.what);
        let mut r =
            RecordReader::new(&b"k\tv\n\nx\ty\tz\n"[..], RecordFormat::Tsv, TEXT, false).unwrap();
        assert!(r.next_record().unwrap().unwrap().is_ok());
        let bad = r.next_record().unwrap().unwrap().unwrap_err();
        assert_eq!(bad.line, 3, "{}", bad.what);
    }

    #[test]
    fn u64_keys_are_decimal_in_every_encoding() {
        for encoding in [Encoding::Text, Encoding::Hex] {
            let codec = Codec {
                keys: KeyFormat::U64,
                encoding,
            };
            let records: Vec<_> = [0u64, 7, u64::MAX]
                .iter()
                .map(|k| (k.ordered_bytes(), b"v\x00".to_vec()))
                .collect();
            for format in [RecordFormat::Tsv, RecordFormat::Csv, RecordFormat::Jsonl] {
                round_trip(codec, format, false, &records);
            }
            assert_eq!(codec.show_key(&7u64.ordered_bytes()), "7");
        }
    }

    fn records() -> impl Strategy<Value = Vec<(Vec<u8>, Vec<u8>)>> {
        let bytes = |min| {
            prop::collection::vec(
                prop_oneof![
                    any::<u8>(),
                    prop::sample::select(b"\t\n\r\\\",'x ".to_vec())
                ],
                min..24,
            )
        };
        prop::collection::vec((bytes(1), bytes(0)), 0..12)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

        #[test]
        fn escaping_round_trips_any_bytes(b in prop::collection::vec(any::<u8>(), 0..64)) {
            let text = escape(&b);
            prop_assert_eq!(unescape(text.as_bytes()).unwrap(), b.clone());
            prop_assert!(!text.contains(['\t', '\n', '\r']));
            prop_assert_eq!(from_hex(to_hex(&b).as_bytes()).unwrap(), b);
        }

        #[test]
        fn every_scan_format_loads_back_byte_identical(records in records(), header: bool) {
            for encoding in [Encoding::Text, Encoding::Hex] {
                let codec = Codec { keys: KeyFormat::Bytes, encoding };
                round_trip(codec, RecordFormat::Tsv, header, &records);
                round_trip(codec, RecordFormat::Csv, header, &records);
                round_trip(codec, RecordFormat::Jsonl, false, &records);
            }
        }
    }
}
