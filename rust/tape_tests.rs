//! The tape against `parse_strict`'s `Value`: the same documents, the same errors, and the same
//! validity and violations on the JSON-Schema-Test-Suite cases the repository runs.

use std::path::Path;

use super::*;
use crate::validate::{CompileOptions, SchemaValidator};

/// `text` through both parsers: the same value, or the same error.
fn same_as_parse_strict(text: &[u8]) {
    let tree = parse::parse_strict(text);
    let tape = Tape::parse(text);
    match (&tree, &tape) {
        (Ok(value), Ok(tape)) => {
            assert_eq!(&*tape.root().to_value(), value, "{text:?}");
            assert_eq!(after(&tape.entries, 0), tape.entries.len());
        }
        (Err(expected), Err(error)) => assert_eq!(error, expected, "{text:?}"),
        _ => panic!("{text:?}: parse_strict {tree:?}, tape {tape:?}"),
    }
}

const SAMPLES: &[&str] = &[
    r#" {"a": [1, -2, 3.5, -0.0, 1e2, true, false, null, "x\u00e9\ud83d\ude00\n"],
        "b": {}, "c": [], "d": 18446744073709551615, "e": -9223372036854775808} "#,
    r#"{"a":{"b":1,"b":2}}"#,
    r#"{"a":[1,"\ud800"]}"#,
    r#"{"k\udc00":1}"#,
    r#"{"a":1,"a":NaN}"#,
    r#"[[1e999], "\udfff"]"#,
    r#"[NaN, 1,]"#,
    r#"{"a/b": {"~": NaN}}"#,
    r#"{"esc\"aped": "tab\there", "plain": "é", "nested": [[[]], {"": {"x": [null]}}]}"#,
    "[1,\u{a0}2]",
    "\u{feff}{}",
];

#[test]
fn samples_and_their_mutations_parse_as_parse_strict_parses_them() {
    let inserts: &[&[u8]] = &[
        b"", b",", b"\"", b"\\", b"]", b"}", b"{", b"x", b"\xff", b"\\u", b"1",
    ];
    for sample in SAMPLES {
        let bytes = sample.as_bytes();
        same_as_parse_strict(bytes);
        for cut in 0..=bytes.len() {
            same_as_parse_strict(&bytes[..cut]);
            for insert in inserts {
                let mut mutated = bytes[..cut].to_vec();
                mutated.extend_from_slice(insert);
                mutated.extend_from_slice(bytes.get(cut + 1..).unwrap_or_default());
                same_as_parse_strict(&mutated);
            }
        }
    }
}

#[test]
fn objects_past_the_compared_size_find_duplicates_and_members() {
    for size in [1, 15, 16, 17, 100] {
        let members: Vec<String> = (0..size).map(|i| format!(r#""k{i}":[{i}]"#)).collect();
        let text = format!("{{{}}}", members.join(","));
        same_as_parse_strict(text.as_bytes());
        let tape = Tape::parse(text.as_bytes()).unwrap();
        let object = tape.root().as_object().unwrap();
        assert_eq!(Object::len(&object), size);
        let last = object
            .get(&TapeJson::prepare_key(&format!("k{}", size - 1)))
            .unwrap();
        assert_eq!(*last.to_value(), serde_json::json!([size - 1]));
        assert!(object.get(&TapeJson::prepare_key("absent")).is_none());
        for repeated in [0, size - 1] {
            same_as_parse_strict(
                format!(r#"{{{},"k{repeated}":1}}"#, members.join(",")).as_bytes(),
            );
        }
    }
}

#[test]
fn strings_without_escapes_borrow_the_text() {
    let text = br#"{"plain": "abc", "escaped": "a\nb"}"#;
    let tape = Tape::parse(text).unwrap();
    let borrowed = |at: usize| matches!(&tape.entries[at], Entry::String(Cow::Borrowed(_)));
    assert_eq!(
        (1..5).map(borrowed).collect::<Vec<_>>(),
        [true, true, true, false]
    );
}

#[test]
fn nodes_answer_as_the_value_does() {
    let text = br#"{"s": "h\u00e9llo", "i": 42, "f": 1.5, "b": true, "n": null, "a": [10, 20]}"#;
    let tape = Tape::parse(text).unwrap();
    let object = tape.root().as_object().unwrap();
    let member = |name: &str| object.get(&TapeJson::prepare_key(name)).unwrap();
    assert_eq!(member("s").as_string().as_deref(), Some("héllo"));
    assert_eq!(member("s").string_length(), Some(5));
    assert_eq!(member("i").as_number().and_then(|n| n.as_u64()), Some(42));
    assert_eq!(member("f").json_type(), JsonType::Number);
    assert_eq!(member("b").as_boolean(), Some(true));
    assert!(member("n").is_null());
    let array = member("a").as_array().unwrap();
    let items: Vec<Value> = array
        .elements()
        .map(|item| item.to_value().into_owned())
        .collect();
    assert_eq!(items, [serde_json::json!(10), serde_json::json!(20)]);
    assert!(member("s").equals_value(&serde_json::json!("héllo")));
    assert!(member("i").equals_value(&serde_json::json!(42.0)));
    let names: Vec<&str> = object.members().map(|(name, _)| name).collect();
    assert_eq!(names, ["s", "i", "f", "b", "n", "a"]);
    assert_ne!(member("s").identity(), member("i").identity());
    assert_eq!(member("s").identity(), member("s").identity());
}

const DIALECTS: [(&str, &str); 5] = [
    ("draft4", "http://json-schema.org/draft-04/schema#"),
    ("draft6", "http://json-schema.org/draft-06/schema#"),
    ("draft7", "http://json-schema.org/draft-07/schema#"),
    (
        "draft2019-09",
        "https://json-schema.org/draft/2019-09/schema",
    ),
    (
        "draft2020-12",
        "https://json-schema.org/draft/2020-12/schema",
    ),
];

fn json_files(folder: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(folder).expect("suite folder") {
        let path = entry.expect("suite entry").path();
        if path.is_dir() {
            json_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "json") {
            out.push(path);
        }
    }
}

/// Every suite case whose schema compiles: the tape validator gives the `Value` validator's
/// verdict and violations on the case's data written as text.
#[test]
fn suite_cases_validate_alike_on_the_tape_and_the_value() {
    let suite =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/JSON-Schema-Test-Suite/tests");
    let mut compared = 0;
    for (draft, dialect) in DIALECTS {
        let mut files = Vec::new();
        json_files(&suite.join(draft), &mut files);
        for file in files {
            let formats = file.to_string_lossy().contains("optional/format/");
            let options = CompileOptions {
                validate_formats: formats.then_some(true),
                resources: Vec::new(),
                ..Default::default()
            };
            let groups: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
            for group in groups.as_array().unwrap() {
                let mut schema = group["schema"].clone();
                if let Some(object) = schema.as_object_mut() {
                    object.entry("$schema").or_insert_with(|| dialect.into());
                }
                let (Ok(by_value), Ok(by_tape)) = (
                    SchemaValidator::compile(&schema, &options),
                    SchemaValidator::<TapeJson>::compile_for(&schema, &options),
                ) else {
                    continue;
                };
                for test in group["tests"].as_array().unwrap() {
                    let text = serde_json::to_vec(&test["data"]).unwrap();
                    let (Ok(value), Ok(tape)) = (parse::parse_strict(&text), Tape::parse(&text))
                    else {
                        continue;
                    };
                    let case = format!("{}: {}", file.display(), test["description"]);
                    assert_eq!(
                        by_tape.is_valid(tape.root()),
                        by_value.is_valid(&value),
                        "{case}"
                    );
                    assert_eq!(
                        by_tape.violations(tape.root()),
                        by_value.violations(&value),
                        "{case}"
                    );
                    compared += 1;
                }
            }
        }
    }
    assert!(compared > 5000, "only {compared} suite cases compared");
}
