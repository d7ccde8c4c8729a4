//! The core's fuzz harness: a resolved variant config with one to three numbers set to
//! adversarial values (zero, one, the largest of each integer width, 2^53 + 1, ...) or a
//! key removed must be accepted or refused with an error; never a panic. Each mutant goes
//! through `check_variant_json`, which parses it, runs the config's checks and builds
//! the whole stack (every layer's own rules) without running it.
//!
//! Bounded for CI (proptest's case count; `PROPTEST_CASES` raises it for a longer
//! session). The Python side fuzzes scenario files and fio job files (tests/test_fuzz.py).

use proptest::prelude::*;
use serde_json::Value;
use ztwin_core::config::{test_fio_variant, test_variant};
use ztwin_core::run::check_variant_json;

/// Every path to a number or a string in `v`.
fn leaves(v: &Value, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                path.push(k.clone());
                leaves(x, path, out);
                path.pop();
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                path.push(i.to_string());
                leaves(x, path, out);
                path.pop();
            }
        }
        Value::Number(_) | Value::String(_) | Value::Bool(_) => out.push(path.clone()),
        Value::Null => {}
    }
}

fn at<'a>(v: &'a mut Value, path: &[String]) -> &'a mut Value {
    path.iter().fold(v, |v, k| match v {
        Value::Object(m) => m.get_mut(k).expect("a leaf's path"),
        Value::Array(a) => &mut a[k.parse::<usize>().expect("an index")],
        _ => unreachable!("a leaf's path goes through containers"),
    })
}

const ADVERSARIAL: [u64; 12] = [
    0,
    1,
    2,
    3,
    255,
    4096,
    u32::MAX as u64,
    u32::MAX as u64 + 1,
    (1 << 53) + 1,
    i64::MAX as u64,
    u64::MAX - 1,
    u64::MAX,
];

fn mutate(base: &Value, picks: &[(usize, usize, bool)]) -> Value {
    let mut v = base.clone();
    for &(leaf, value, delete) in picks {
        let mut all = Vec::new();
        leaves(&v, &mut Vec::new(), &mut all);
        if all.is_empty() {
            break;
        }
        let path = &all[leaf % all.len()];
        if delete {
            let (last, parent) = path.split_last().expect("a non-empty path");
            if let Value::Object(m) = at(&mut v, parent) {
                m.remove(last);
            }
            continue;
        }
        let slot = at(&mut v, path);
        let new = match &*slot {
            Value::Number(_) => Value::from(ADVERSARIAL[value % ADVERSARIAL.len()]),
            Value::Bool(b) => Value::Bool(!*b),
            Value::String(_) => Value::from(["", "x", "0", "zstd", "2.2", "0.6"][value % 6]),
            other => other.clone(),
        };
        *slot = new;
    }
    v
}

fn check(base: &Value, picks: &[(usize, usize, bool)]) {
    let json = mutate(base, picks).to_string();
    // An error is fine; a panic fails the property (proptest reports the mutant).
    let _ = check_variant_json(&json);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_sysbench_configs_are_refused_or_built_never_panic(picks in proptest::collection::vec((any::<usize>(), any::<usize>(), proptest::bool::weighted(0.15)), 1..4)) {
        let base = serde_json::to_value(test_variant()).unwrap();
        check(&base, &picks);
    }

    #[test]
    fn mutated_fio_configs_are_refused_or_built_never_panic(picks in proptest::collection::vec((any::<usize>(), any::<usize>(), proptest::bool::weighted(0.15)), 1..4)) {
        let base = serde_json::to_value(test_fio_variant()).unwrap();
        check(&base, &picks);
    }
}

#[test]
fn the_bases_build() {
    for base in [test_variant(), test_fio_variant()] {
        check_variant_json(&serde_json::to_string(&base).unwrap()).unwrap();
    }
}
