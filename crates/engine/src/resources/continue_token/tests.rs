//! Continue tokens against kube-apiserver 1.32's answers: each row is a token sent to the
//! oracle and the message of its 400 (`invalid continue token: ` removed, which the list
//! adds).

use super::*;

const REFUSED: &[(&str, &str)] = &[
    ("abc", "continue key is not valid: invalid character 'i' looking for beginning of value"),
    ("a", "continue key is not valid: illegal base64 data at input byte 0"),
    ("ab", "continue key is not valid: invalid character 'i' looking for beginning of value"),
    ("abcd", "continue key is not valid: invalid character 'i' looking for beginning of value"),
    ("abcde", "continue key is not valid: illegal base64 data at input byte 4"),
    ("ab=", "continue key is not valid: illegal base64 data at input byte 2"),
    ("ab==", "continue key is not valid: illegal base64 data at input byte 2"),
    ("a+b/", "continue key is not valid: illegal base64 data at input byte 1"),
    ("a b", "continue key is not valid: illegal base64 data at input byte 1"),
    ("a.b", "continue key is not valid: illegal base64 data at input byte 1"),
    ("$$$$", "continue key is not valid: illegal base64 data at input byte 0"),
    ("YWJj\nZA", "continue key is not valid: invalid character 'a' looking for beginning of value"),
    ("eyJ2Ijo", "continue key is not valid: unexpected end of JSON input"),
    ("e30", "continue key is not valid: server does not recognize this encoded version "),
    ("W10", "continue key is not valid: json: cannot unmarshal array into Go value of type storage.continueToken"),
    ("bnVsbA", "continue key is not valid: server does not recognize this encoded version "),
    ("Ingi", "continue key is not valid: json: cannot unmarshal string into Go value of type storage.continueToken"),
    ("MQ", "continue key is not valid: json: cannot unmarshal number into Go value of type storage.continueToken"),
    (
        "eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ",
        "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
    ),
    (
        "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MX0",
        "continue key is not valid: encoded start key empty (version meta.k8s.io/v1)",
    ),
    (
        "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiIifQ",
        "continue key is not valid: encoded start key empty (version meta.k8s.io/v1)",
    ),
    (
        "eyJ2IjoibWV0YS5rOHMuaW8vdjIiLCJydiI6MSwic3RhcnQiOiJhIn0",
        "continue key is not valid: server does not recognize this encoded version meta.k8s.io/v2",
    ),
    (
        "eyJ2IjoiIiwicnYiOjEsInN0YXJ0IjoiYSJ9",
        "continue key is not valid: server does not recognize this encoded version ",
    ),
    (
        "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6IjEiLCJzdGFydCI6ImEifQ",
        "continue key is not valid: json: cannot unmarshal string into Go struct field continueToken.rv of type int64",
    ),
    (
        "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MS41LCJzdGFydCI6ImEifQ",
        "continue key is not valid: json: cannot unmarshal number 1.5 into Go struct field continueToken.rv of type int64",
    ),
    ("eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiIuLi9hIn0", "continue key is not valid: ../a"),
    ("eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiJhLy4uL2IifQ", "continue key is not valid: a/../b"),
    ("eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiJhLy9iIn0", "continue key is not valid: a//b"),
    ("eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiJhLyJ9", "continue key is not valid: a/"),
    (
        "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOjF9",
        "continue key is not valid: json: cannot unmarshal number into Go struct field continueToken.start of type string",
    ),
    (
        "eyJ2IjoxLCJydiI6MSwic3RhcnQiOiJhIn0",
        "continue key is not valid: json: cannot unmarshal number into Go struct field continueToken.v of type string",
    ),
    (
        "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiJhIn0geA",
        "continue key is not valid: invalid character 'x' after top-level value",
    ),
    (
        "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiJhIg",
        "continue key is not valid: unexpected end of JSON input",
    ),
    (
        "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6OTk5OTk5OTk5OTk5OTk5OTk5OTksInN0YXJ0IjoiYSJ9",
        "continue key is not valid: json: cannot unmarshal number 99999999999999999999 into Go struct field continueToken.rv of type int64",
    ),
    (
        "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiJ3MQAiLCJleHRyYSI6dHJ1ZX0",
        "continue key is not valid: invalid character '\\x00' in string literal",
    ),
    (
        "eyJWIjoibWV0YS5rOHMuaW8vdjEiLCJSViI6MSwiU1RBUlQiOiJ3MQAifQ",
        "continue key is not valid: invalid character '\\x00' in string literal",
    ),
    (
        "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiJ3MQAifQ",
        "continue key is not valid: invalid character '\\x00' in string literal",
    ),
    (
        "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6OTk5OTk5LCJzdGFydCI6IncxACJ9",
        "continue key is not valid: invalid character '\\x00' in string literal",
    ),
    (
        "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MCwic3RhcnQiOiJhIn0",
        "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
    ),
    (
        "ICB7InYiOiJtZXRhLms4cy5pby92MSIsInJ2Ijo1LCJzdGFydCI6IncxACJ9ICA",
        "continue key is not valid: invalid character '\\x00' in string literal",
    ),
    (
        "eyJ2IjpudWxsLCJydiI6MSwic3RhcnQiOiJhIn0",
        "continue key is not valid: server does not recognize this encoded version ",
    ),
    (
        "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MWUyLCJzdGFydCI6ImEifQ",
        "continue key is not valid: json: cannot unmarshal number 1e2 into Go struct field continueToken.rv of type int64",
    ),
    ("w78", "continue key is not valid: invalid character 'Ã' looking for beginning of value"),
    ("bnVs", "continue key is not valid: invalid character ' ' in literal null (expecting 'l')"),
    ("dHJ1", "continue key is not valid: invalid character ' ' in literal true (expecting 'e')"),
    ("eyJ2Ig", "continue key is not valid: unexpected end of JSON input"),
    ("eyJ2Ijp9", "continue key is not valid: invalid character '}' looking for beginning of value"),
    ("eyx9", "continue key is not valid: invalid character ',' looking for beginning of object key string"),
];

#[test]
fn refused_tokens_fail_with_kube_s_words() {
    for (token, want) in REFUSED {
        assert_eq!(decode(token).map_err(|e| e.to_string()), Err(want.to_string()), "token {token:?}");
    }
}

#[test]
fn accepted_tokens_resume_where_kube_resumes() {
    let doc = |json: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json);
    let at = |rv, start: &str| Ok(Continue { revision: rv, start: start.to_string() });
    // The engine's own tokens round-trip, byte for byte as the oracle writes them.
    let token = encode(202, "list-2\0");
    assert_eq!(token, "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MjAyLCJzdGFydCI6Imxpc3QtMlx1MDAwMCJ9");
    assert_eq!(decode(&token), at(Some(202), "list-2\0"));
    // A negative rv reads the latest revision; a leading slash is dropped.
    assert_eq!(decode(&doc(r#"{"v":"meta.k8s.io/v1","rv":-1,"start":"a"}"#)), at(None, "a"));
    assert_eq!(decode(&doc(r#"{"v":"meta.k8s.io/v1","rv":1,"start":"/a"}"#)), at(Some(1), "a"));
    // Members repeat (the last wins), match by case and by Unicode folding, and unknown
    // ones are ignored, as Go's decoder does.
    assert_eq!(decode(&doc(r#"{"v":"meta.k8s.io/v1","rv":1,"start":"a","rv":2}"#)), at(Some(2), "a"));
    assert_eq!(decode(&doc(r#"{"V":"meta.k8s.io/v1","RV":3,"ſtart":"b","x":[{"}":1}]}"#)), at(Some(3), "b"));
    // Escapes: a pair of surrogates is one character, a lone one U+FFFD.
    assert_eq!(
        decode(&doc(r#"{"v":"meta.k8s.io/v1","rv":4,"start":"\ud83d\ude00\ud800x\u0000"}"#)),
        at(Some(4), "😀\u{fffd}x\0")
    );
    // Padding from earlier engine versions is refused, as kube refuses it.
    assert!(decode(&format!("{token}==")).is_err());
}

#[test]
fn no_token_panics() {
    let long_nesting = "[".repeat(20_000);
    let hostile =
        ["", "{", "[[[[", "\"\\", "{\"v\":\"\\u12", "1e", "-", "tru", "{\"a\"", "\u{ff}\u{fe}", &long_nesting];
    let doc = |json: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json);
    for json in hostile {
        for end in (0..=json.len()).filter(|i| json.is_char_boundary(*i) && (json.len() < 100 || *i == json.len())) {
            let _ = decode(&doc(&json[..end]));
        }
    }
    assert_eq!(
        decode(&doc(&long_nesting)).map_err(|e| e.to_string()),
        Err("continue key is not valid: invalid character '[' exceeded max depth".to_string())
    );
}
