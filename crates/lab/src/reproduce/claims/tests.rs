//! Tests of the claim language: parsing, printing round trips and evaluation.

use super::parse::is_reserved;
use super::*;
use proptest::prelude::*;
use std::collections::HashMap;

fn table(entries: &[(&str, &str, f64)]) -> HashMap<(String, String), f64> {
    entries
        .iter()
        .map(|(m, p, v)| ((m.to_string(), p.to_string()), *v))
        .collect()
}

fn eval(claim: &str, entries: &[(&str, &str, f64)]) -> Result<ClaimOutcome, EvalError> {
    let values = table(entries);
    let lookup = |metric: &str, point: &str| {
        values
            .get(&(metric.to_string(), point.to_string()))
            .copied()
    };
    Claim::parse(claim).unwrap().evaluate(&lookup)
}

fn holds(claim: &str, entries: &[(&str, &str, f64)]) -> bool {
    eval(claim, entries).unwrap().holds
}

fn reference(metric: &str, point: &str) -> Expr {
    Expr::Ref(Reference {
        metric: metric.into(),
        point: point.into(),
    })
}

#[test]
fn parses_and_prints_canonically() {
    let cases = [
        (
            "utilization(gang-25ms)>utilization(batch)",
            "utilization(gang-25ms) > utilization(batch)",
        ),
        (
            "delay( seq:primary-random )  <=  0.6*delay(dfcfs:random)",
            "delay(seq:primary-random) <= 0.6 * delay(dfcfs:random)",
        ),
        ("u(batch) ~= 74 within 5 %", "u(batch) ~= 74 within 5%"),
        ("u(a) ≈ 74 within +-2", "u(a) ~= 74 within ±2"),
        ("abs(u(a) - u(b)) < 2", "abs(u(a) - u(b)) < 2"),
        (
            "min(x(a),x(b),x(c)) >= mean(y(a), 1e-7)",
            "min(x(a), x(b), x(c)) >= mean(y(a), 1e-7)",
        ),
        ("-(a(p) + 1) != --2", "-(a(p) + 1) != --2"),
        (
            "a(p) - (b(q) - c(r)) == a(p) - b(q) - c(r)",
            "a(p) - (b(q) - c(r)) == a(p) - b(q) - c(r)",
        ),
        ("((a(p))) > .5", "a(p) > 0.5"),
        (
            "increasing( t/mild-ok , threads=3,threads=4 )",
            "increasing(t/mild-ok, threads=3, threads=4)",
        ),
        ("flat(t, 3, 5, 7, within 5%)", "flat(t, 3, 5, 7, within 5%)"),
        (
            "decreasing(t, a, b, within ±1)",
            "decreasing(t, a, b, within ±1)",
        ),
    ];
    for (input, canonical) in cases {
        let claim = Claim::parse(input).unwrap_or_else(|e| panic!("{input}: {e}"));
        assert_eq!(claim.to_string(), canonical, "{input}");
        assert_eq!(Claim::parse(canonical).unwrap(), claim, "{input}");
    }
}

#[test]
fn multiplication_binds_tighter() {
    let claim = Claim::parse("a(x) + b(x) * c(x) > 0").unwrap();
    let Claim::Compare { lhs, .. } = &claim else {
        panic!("not a comparison");
    };
    assert_eq!(
        *lhs,
        Expr::Binary {
            op: BinOp::Add,
            lhs: Box::new(reference("a", "x")),
            rhs: Box::new(Expr::Binary {
                op: BinOp::Mul,
                lhs: Box::new(reference("b", "x")),
                rhs: Box::new(reference("c", "x")),
            }),
        }
    );
    let values = [("a", "x", 1.0), ("b", "x", 2.0), ("c", "x", 3.0)];
    assert!(holds("a(x) + b(x) * c(x) == 7", &values));
    assert!(holds("(a(x) + b(x)) * c(x) == 9", &values));
    assert!(holds("c(x) - b(x) - a(x) == 0", &values));
    assert!(holds("c(x) / b(x) / a(x) == 1.5", &values));
    assert!(holds("-a(x) * 2 == -2", &values));
    assert!(holds("2 - -1 == 3", &values));
}

#[test]
fn every_comparison() {
    let v = [("m", "a", 2.0), ("m", "b", 3.0)];
    assert!(holds("m(a) < m(b)", &v));
    assert!(!holds("m(b) < m(a)", &v));
    assert!(holds("m(a) <= 2", &v));
    assert!(!holds("m(b) <= 2", &v));
    assert!(holds("m(b) > m(a)", &v));
    assert!(!holds("m(a) > m(a)", &v));
    assert!(holds("m(a) >= 2", &v));
    assert!(!holds("m(a) >= 2.5", &v));
    assert!(holds("m(a) == 2", &v));
    assert!(!holds("m(a) == m(b)", &v));
    assert!(holds("m(a) != m(b)", &v));
    assert!(!holds("m(a) != 2", &v));
    assert!(holds("m(b) ~= 3.1", &v)); // default 5 %
    assert!(!holds("m(b) ~= 3.5", &v));
    assert!(holds("m(b) ~= 3.5 within 15%", &v));
    assert!(holds("m(b) ~= 4 within ±1", &v));
    assert!(!holds("m(b) ~= 4.5 within 1 abs", &v));
    assert!(holds("m(a) ≤ m(b)", &v));
    assert!(holds("m(a) ≠ m(b)", &v));
}

#[test]
fn outcome_details() {
    let v = [("u", "gang", 62.1), ("u", "prio", 59.8)];
    let outcome = eval("u(gang) > u(prio)", &v).unwrap();
    assert!(outcome.holds);
    assert_eq!((outcome.lhs, outcome.rhs), (62.1, 59.8));
    assert_eq!(outcome.detail, "62.1 > 59.8");
    let outcome = eval("u(prio) > u(gang)", &v).unwrap();
    assert_eq!(outcome.detail, "59.8 > 62.1 is false");
    let outcome = eval("u(gang) ~= u(prio)", &v).unwrap();
    assert_eq!(outcome.detail, "62.1 ~= 59.8 within 5% (off by +3.846%)");
    let close = [("x", "a", 1160.4), ("x", "b", 1160.2)];
    let outcome = eval("x(a) < x(b)", &close).unwrap();
    assert_eq!(outcome.detail, "1160.4 < 1160.2 is false");
}

#[test]
fn functions() {
    let v = [("m", "a", 2.0), ("m", "b", -3.0), ("m", "c", 7.0)];
    assert!(holds("min(m(a), m(b), m(c)) == -3", &v));
    assert!(holds("max(m(a), m(b), m(c)) == 7", &v));
    assert!(holds("abs(m(b)) == 3", &v));
    assert!(holds("mean(m(a), m(b), m(c)) == 2", &v));
    assert!(holds("max(m(a)) == 2", &v));
}

#[test]
fn trend_claims() {
    let black = [
        ("t", "3", 467.0),
        ("t", "4", 633.0),
        ("t", "5", 817.0),
        ("h", "3", 413.0),
        ("h", "4", 418.0),
        ("h", "5", 417.0),
    ];
    let outcome = eval("increasing(t, 3, 4, 5)", &black).unwrap();
    assert!(outcome.holds);
    assert_eq!((outcome.lhs, outcome.rhs), (467.0, 817.0));
    assert_eq!(outcome.detail, "increasing: 467 < 633 < 817");
    assert!(!holds("decreasing(t, 3, 4, 5)", &black));
    assert!(holds("decreasing(t, 5, 4, 3)", &black));
    let outcome = eval("increasing(h, 3, 4, 5)", &black).unwrap();
    assert!(!outcome.holds);
    assert!(
        outcome.detail.contains("from 4 (418) to 5 (417)"),
        "{}",
        outcome.detail
    );
    assert!(holds("increasing(h, 3, 4, 5, within 1%)", &black));
    assert!(holds("flat(h, 3, 4, 5, within 2%)", &black));
    assert!(!holds("flat(t, 3, 4, 5, within 20%)", &black));
    let outcome = eval("flat(t, 3, 4, 5, within 20%)", &black).unwrap();
    assert_eq!((outcome.lhs, outcome.rhs), (467.0, 817.0));
    assert!(
        outcome.detail.starts_with("not flat within 20%: 3=467"),
        "{}",
        outcome.detail
    );
    assert!(holds("flat(h, 3, 4, 5, within ±5)", &black));
}

#[test]
fn evaluation_errors() {
    let v = [("m", "a", 2.0), ("m", "zero", 0.0), ("m", "nan", f64::NAN)];
    let err = eval("m(a) > m(missing-point)", &v).unwrap_err();
    assert_eq!(
        err,
        EvalError::Missing {
            metric: "m".into(),
            point: "missing-point".into()
        }
    );
    assert!(err.to_string().contains("m(missing-point)"));
    let err = eval("m(a) / (m(zero) * 2) > 1", &v).unwrap_err();
    assert_eq!(
        err,
        EvalError::DivisionByZero {
            divisor: "m(zero) * 2".into()
        }
    );
    assert!(matches!(
        eval("m(nan) < 1", &v),
        Err(EvalError::NotFinite { .. })
    ));
    assert!(matches!(
        eval("m(nan) != 1", &v),
        Err(EvalError::NotFinite { .. })
    ));
    assert!(matches!(
        eval("1e300 * 1e300 > 1", &v),
        Err(EvalError::NotFinite { .. })
    ));
    assert!(matches!(
        eval("increasing(m, a, gone)", &v),
        Err(EvalError::Missing { .. })
    ));
}

#[test]
fn references_in_order_without_duplicates() {
    let claim = Claim::parse("u(a) + u(b) * v(a) > min(u(a), w(c:d=1/e))").unwrap();
    let refs: Vec<String> = claim.references().iter().map(|r| r.to_string()).collect();
    assert_eq!(refs, ["u(a)", "u(b)", "v(a)", "w(c:d=1/e)"]);
    let claim = Claim::parse("flat(t, 3, 4, 3, within 5%)").unwrap();
    let refs: Vec<String> = claim.references().iter().map(|r| r.to_string()).collect();
    assert_eq!(refs, ["t(3)", "t(4)"]);
    assert!(Claim::parse("1 < 2").unwrap().references().is_empty());
}

fn parse_err(text: &str) -> ClaimError {
    Claim::parse(text).unwrap_err()
}

#[test]
fn parse_errors_name_what_was_expected() {
    let err = parse_err("u(a) + > 3");
    assert_eq!(err.column, 7);
    assert!(
        err.message.starts_with("expected a value"),
        "{}",
        err.message
    );
    let err = parse_err("u(a)");
    assert_eq!(err.column, 4);
    assert!(err.message.contains("comparison"), "{}", err.message);
    assert!(
        err.message.contains("the end of the claim"),
        "{}",
        err.message
    );
    let err = parse_err("u(a) = 3");
    assert!(err.message.contains("`==`"), "{}", err.message);
    let err = parse_err("u > 3");
    assert_eq!(err.column, 2);
    assert!(err.message.contains("metric(point)"), "{}", err.message);
    let err = parse_err("u() > 3");
    assert!(err.message.contains("point name"), "{}", err.message);
    let err = parse_err("u(a b) > 3");
    assert_eq!(err.column, 4);
    let err = parse_err("u(a) < 3 within 5%");
    assert!(
        err.message.contains("only applies to `~=`"),
        "{}",
        err.message
    );
    let err = parse_err("u(a) ~= 3 within 5");
    assert_eq!(err.column, 17);
    assert!(err.message.contains("missing a unit"), "{}", err.message);
    let err = parse_err("u(a) ~= 3 5");
    assert!(err.message.contains("`within TOL`"), "{}", err.message);
    let err = parse_err("abs(u(a), u(b)) > 1");
    assert!(err.message.contains("exactly one"), "{}", err.message);
    let err = parse_err("min > 1");
    assert!(err.message.contains("builtin"), "{}", err.message);
    let err = parse_err("flat(t, a, b)");
    assert!(err.message.contains("needs a tolerance"), "{}", err.message);
    let err = parse_err("increasing(t, a)");
    assert!(
        err.message.contains("at least two points"),
        "{}",
        err.message
    );
    let err = parse_err("increasing(t, a, b) extra");
    assert!(err.message.contains("end of the claim"), "{}", err.message);
    let err = parse_err("increasing(min, a, b)");
    assert!(err.message.contains("reserved"), "{}", err.message);
    let err = parse_err("flat(t, a, b, within 5%");
    assert!(err.message.contains("`)`"), "{}", err.message);
    let err = parse_err("u(a) > increasing(t, a, b)");
    assert!(err.message.contains("whole claim"), "{}", err.message);
    let err = parse_err("u(a) > 1e999");
    assert!(err.message.contains("too large"), "{}", err.message);
    let err = parse_err("");
    assert_eq!(err.column, 0);
    let deep = format!("{}1{} > 0", "(".repeat(500), ")".repeat(500));
    assert!(parse_err(&deep).message.contains("nested too deeply"));
    let long = format!("{} > 0", vec!["1"; 5000].join(" + "));
    assert!(parse_err(&long).message.contains("nested too deeply"));
    let negs = format!("{}1 > 0", "-".repeat(5000));
    assert!(parse_err(&negs).message.contains("nested too deeply"));
}

#[test]
fn serde_as_string() {
    let claim = Claim::parse("u(a) > 2").unwrap();
    let json = serde_json::to_string(&claim).unwrap();
    assert_eq!(json, "\"u(a) > 2\"");
    let back: Claim = serde_json::from_str(&json).unwrap();
    assert_eq!(back, claim);
    let err = serde_json::from_str::<Claim>("\"u(a) >\"").unwrap_err();
    assert!(err.to_string().contains("column 7"), "{err}");
}

// --- property tests -------------------------------------------------------------------

fn name() -> impl Strategy<Value = String> {
    "[a-zA-Z_][a-zA-Z0-9_.:/-]{0,6}".prop_filter("reserved", |n| !is_reserved(n))
}

fn point() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9_.:/=-]{1,8}"
}

fn tolerance() -> impl Strategy<Value = Tolerance> {
    prop_oneof![
        (0u32..1000).prop_map(|p| Tolerance::Relative(f64::from(p) / 100.0)),
        (0u32..1000).prop_map(|a| Tolerance::Absolute(f64::from(a) / 10.0)),
    ]
}

fn expr() -> impl Strategy<Value = Expr> {
    let leaf = prop_oneof![
        prop_oneof![
            (0u32..100_000).prop_map(|n| f64::from(n) / 100.0),
            Just(1e-7),
            Just(2.5e20),
        ]
        .prop_map(Expr::Number),
        (name(), point()).prop_map(|(metric, point)| Expr::Ref(Reference { metric, point })),
    ];
    leaf.prop_recursive(5, 40, 4, |inner| {
        prop_oneof![
            inner.clone().prop_map(|e| Expr::Neg(Box::new(e))),
            (
                prop_oneof![
                    Just(BinOp::Add),
                    Just(BinOp::Sub),
                    Just(BinOp::Mul),
                    Just(BinOp::Div)
                ],
                inner.clone(),
                inner.clone()
            )
                .prop_map(|(op, lhs, rhs)| Expr::Binary {
                    op,
                    lhs: Box::new(lhs),
                    rhs: Box::new(rhs)
                }),
            inner.clone().prop_map(|e| Expr::Call {
                func: Func::Abs,
                args: vec![e]
            }),
            (
                prop_oneof![Just(Func::Min), Just(Func::Max), Just(Func::Mean)],
                prop::collection::vec(inner, 1..4)
            )
                .prop_map(|(func, args)| Expr::Call { func, args }),
        ]
    })
}

fn claim() -> impl Strategy<Value = Claim> {
    let comparison = prop_oneof![
        Just(Comparison::Lt),
        Just(Comparison::Le),
        Just(Comparison::Gt),
        Just(Comparison::Ge),
        Just(Comparison::Eq),
        Just(Comparison::Ne),
        Just(Comparison::Approx),
    ];
    let compare = (
        expr(),
        comparison,
        expr(),
        proptest::option::of(tolerance()),
    )
        .prop_map(|(lhs, op, rhs, within)| Claim::Compare {
            lhs,
            op,
            rhs,
            within: if op == Comparison::Approx {
                within
            } else {
                None
            },
        });
    let trend = (
        prop_oneof![
            Just(Trend::Increasing),
            Just(Trend::Decreasing),
            Just(Trend::Flat)
        ],
        name(),
        prop::collection::vec(point(), 2..6),
        proptest::option::of(tolerance()),
    )
        .prop_map(|(trend, metric, points, within)| Claim::Trend {
            trend,
            metric,
            points,
            within: if trend == Trend::Flat {
                Some(within.unwrap_or(Tolerance::Relative(0.1)))
            } else {
                within
            },
        });
    prop_oneof![compare, trend]
}

proptest! {
    #[test]
    fn printed_claims_parse_back(claim in claim()) {
        let text = claim.to_string();
        let parsed = Claim::parse(&text);
        prop_assert!(parsed.is_ok(), "{}: {:?}", text, parsed);
        let parsed = parsed.unwrap();
        prop_assert_eq!(parsed.to_string(), text.clone());
        prop_assert_eq!(parsed, claim, "{}", text);
    }

    #[test]
    fn parse_never_panics(text in any::<String>()) {
        if let Err(err) = Claim::parse(&text) {
            prop_assert!(err.column <= text.len());
            prop_assert!(!err.message.is_empty());
        }
    }

    #[test]
    fn parse_never_panics_on_claim_like_text(
        text in "[a-z0-9()<>=~!+*/, .%±:-]{0,40}"
    ) {
        if let Ok(claim) = Claim::parse(&text) {
            let lookup = |_: &str, _: &str| Some(1.0);
            let _ = claim.evaluate(&lookup);
            prop_assert_eq!(Claim::parse(&claim.to_string()), Ok(claim));
        }
    }

    #[test]
    fn evaluation_never_panics(claim in claim(), value in -1e3f64..1e3) {
        let lookup = |_: &str, _: &str| Some(value);
        let _ = claim.evaluate(&lookup);
    }
}
