//! Tests of the SVG charts: determinism, empty input, and the errors for bad values
//! (tests_layout.rs checks what a reader sees: panels, labels, titles and ticks).
use super::*;
use proptest::prelude::*;

pub(super) fn black_chart() -> LineChart {
    let threads = [3.0, 4.0, 5.0, 6.0, 7.0];
    let paper_handoff = [413.0, 418.0, 417.0, 421.0, 428.0];
    let paper_strong = [897.0, 1215.0, 1434.0, 1825.0, 2130.0];
    let zip = |ys: &[f64]| threads.iter().copied().zip(ys.iter().copied()).collect();
    LineChart {
        title: "Black 1990, Table 2: time per synchronization".into(),
        x_label: "threads".into(),
        y_label: "µs per synchronization".into(),
        log_y: false,
        log_x: false,
        series: vec![
            Series {
                name: "handoff (ours)".into(),
                points: zip(&[400.0, 410.0, 415.0, 430.0, 431.0]),
                style: SeriesStyle::Ours,
            },
            Series {
                name: "strong hint (ours)".into(),
                points: zip(&[900.0, 1200.0, 1500.0, 1800.0, 2100.0]),
                style: SeriesStyle::Ours,
            },
            Series {
                name: "handoff (paper)".into(),
                points: zip(&paper_handoff),
                style: SeriesStyle::Paper,
            },
            Series {
                name: "strong hint (paper)".into(),
                points: zip(&paper_strong),
                style: SeriesStyle::Paper,
            },
        ],
        x_names: Vec::new(),
        points_only: false,
        y_range: None,
    }
}

fn gupta_bars() -> StackedBars {
    let bar = |label: &str, values: [f64; 6], style| StackedBar {
        label: label.into(),
        values: values.to_vec(),
        style,
    };
    StackedBars {
        title: "Gupta 1991, Figure 3: priority + blocking locks".into(),
        y_label: "% of machine time".into(),
        categories: [
            "useful",
            "cache-miss stall",
            "spin",
            "idle",
            "context switch",
            "kernel",
        ]
        .map(String::from)
        .to_vec(),
        bars: vec![
            bar(
                "MP3D ours",
                [61.0, 20.0, 5.0, 8.0, 4.0, 2.0],
                SeriesStyle::Ours,
            ),
            bar(
                "MP3D paper",
                [62.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                SeriesStyle::Paper,
            ),
            bar(
                "LU ours",
                [63.0, 15.0, 6.0, 10.0, 4.0, 2.0],
                SeriesStyle::Ours,
            ),
        ],
    }
}

fn dibella_groups(count: usize) -> GroupedBars {
    one_panel(
        "DiBella 1992, Table 4: delay",
        "ms per request",
        (0..count)
            .map(|i| BarGroup {
                label: format!("Primary/Sequential:Primary/Fixed #{i}"),
                ours: Some(3.0 + i as f64 * 0.1),
                paper: if i % 3 == 0 {
                    None
                } else {
                    Some(2.9 + i as f64 * 0.1)
                },
            })
            .collect(),
    )
}

/// A bar chart of one panel.
pub(super) fn one_panel(title: &str, y_label: &str, groups: Vec<BarGroup>) -> GroupedBars {
    GroupedBars {
        title: title.into(),
        panels: vec![BarPanel {
            y_label: y_label.into(),
            groups,
        }],
    }
}

fn looks_like_svg(svg: &str, names: &[&str]) {
    assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(80)]);
    assert!(svg.trim_end().ends_with("</svg>"));
    for name in names {
        assert!(svg.contains(name), "missing {name}");
    }
}

#[test]
fn line_chart_is_svg_with_legend() {
    let svg = line_chart(&black_chart()).unwrap();
    looks_like_svg(
        &svg,
        &[
            "handoff (ours)",
            "strong hint (paper)",
            "threads",
            "Black 1990",
        ],
    );
    assert!(svg.contains("stroke-dasharray") || svg.matches("<polyline").count() > 4);
    assert_eq!(svg, line_chart(&black_chart()).unwrap());
}

#[test]
fn log_scale_line_chart() {
    let mut chart = black_chart();
    chart.log_y = true;
    chart.series[0].points.push((8.0, 1e6));
    let svg = line_chart(&chart).unwrap();
    looks_like_svg(&svg, &["handoff (ours)"]);
    chart.series[0].points.push((9.0, 0.0));
    assert!(matches!(
        line_chart(&chart),
        Err(PlotError::NonPositiveOnLogScale { .. })
    ));
}

#[test]
fn stacked_bars_are_svg_with_categories() {
    let svg = stacked_bars(&gupta_bars()).unwrap();
    looks_like_svg(
        &svg,
        &["MP3D ours", "MP3D paper", "cache-miss stall", "kernel"],
    );
    assert!(svg.contains("#009E73") || svg.contains("rgb(0,158,115)") || svg.contains("009E73"));
    assert_eq!(svg, stacked_bars(&gupta_bars()).unwrap());
}

#[test]
fn grouped_bars_are_svg_and_turn_long_labels() {
    let svg = grouped_bars(&dibella_groups(30)).unwrap();
    looks_like_svg(
        &svg,
        &["ours", "paper", "Primary/Sequential:Primary/Fixed #29"],
    );
    // The y-axis description is always turned; turned group labels add one each, and so does
    // the `n/a` of each of the 10 missing paper values.
    assert_eq!(svg.matches("rotate(270").count(), 41);
    assert_eq!(svg, grouped_bars(&dibella_groups(30)).unwrap());
    let few = grouped_bars(&one_panel(
        "short",
        "x",
        vec![BarGroup {
            label: "a".into(),
            ours: Some(-2.0),
            paper: Some(3.0),
        }],
    ))
    .unwrap();
    assert_eq!(few.matches("rotate(270").count(), 1);
}

#[test]
fn empty_input_draws_a_note() {
    let mut chart = black_chart();
    chart.series.clear();
    let svg = line_chart(&chart).unwrap();
    looks_like_svg(&svg, &["no data", "Black 1990"]);
    let mut bars = gupta_bars();
    bars.bars.clear();
    looks_like_svg(&stacked_bars(&bars).unwrap(), &["no data"]);
    looks_like_svg(&grouped_bars(&dibella_groups(0)).unwrap(), &["no data"]);
}

#[test]
fn bad_values_are_errors() {
    let mut chart = black_chart();
    chart.series[1].points[2].1 = f64::NAN;
    let err = line_chart(&chart).unwrap_err();
    assert!(err.to_string().contains("strong hint (ours)"), "{err}");
    let mut bars = gupta_bars();
    bars.bars[0].values[1] = -1.0;
    assert!(matches!(
        stacked_bars(&bars),
        Err(PlotError::NegativeSegment { .. })
    ));
    let mut bars = gupta_bars();
    bars.bars[2].values.pop();
    assert!(matches!(
        stacked_bars(&bars),
        Err(PlotError::WrongSegmentCount { .. })
    ));
    let mut groups = dibella_groups(2);
    groups.panels[0].groups[1].ours = Some(f64::INFINITY);
    assert!(matches!(
        grouped_bars(&groups),
        Err(PlotError::NonFinite { .. })
    ));
}

#[test]
fn huge_and_degenerate_ranges_do_not_panic() {
    let one = |points: Vec<(f64, f64)>, log_y| LineChart {
        title: "t".into(),
        x_label: "x".into(),
        y_label: "y".into(),
        log_y,
        log_x: false,
        series: vec![Series {
            name: "s".into(),
            points,
            style: SeriesStyle::Paper,
        }],
        x_names: Vec::new(),
        points_only: false,
        y_range: None,
    };
    assert!(matches!(
        line_chart(&one(vec![(0.0, -f64::MAX), (1.0, f64::MAX)], false)),
        Err(PlotError::RangeTooLarge { .. })
    ));
    for points in [
        vec![(1.0, 1.0)],
        vec![(0.0, 0.0), (0.0, 0.0)],
        vec![(0.0, 1e300), (1.0, 1e300 * (1.0 + 1e-15))],
        vec![(-1e300, 1e-300), (1e300, 1e300)],
        vec![(1e-300, 5.0), (2e-300, 6.0)],
    ] {
        line_chart(&one(points.clone(), false)).unwrap();
        if points.iter().all(|p| p.1 > 0.0) {
            line_chart(&one(points, true)).unwrap();
        }
    }
    line_chart(&one(vec![(0.0, 1e-300), (1.0, 1e300)], true)).unwrap();
    grouped_bars(&one_panel(
        "t",
        "y",
        vec![BarGroup {
            label: "a".into(),
            ours: Some(1e300),
            paper: Some(-1e300),
        }],
    ))
    .unwrap();
}

#[test]
fn ticks_are_nice() {
    assert_eq!(
        nice_ticks(0.0, 100.0, 11),
        (0..=10).map(|i| i as f64 * 10.0).collect::<Vec<_>>()
    );
    assert_eq!(nice_ticks(0.0, 1.0, 0), Vec::<f64>::new());
    assert_eq!(nice_ticks(1.0, 1.0, 10), Vec::<f64>::new());
    assert!(nice_ticks(-3.3, 7.9, 10).contains(&0.0));
}

pub(super) fn agreement() -> AgreementChart {
    let dot = |paper: f64, ours: f64| AgreementDot {
        paper,
        ours,
        within: (ours - paper).abs() <= 0.25 * paper,
    };
    AgreementChart {
        title: "DiBella 1992, Table 4".into(),
        band: 0.25,
        panels: vec![
            AgreementPanel {
                heading: "delay: 2 of 3 within 25%, rank 0.5".into(),
                unit: "ms per request".into(),
                dots: vec![dot(8.17, 6.68), dot(4.95, 6.14), dot(2.89, 2.0)],
            },
            AgreementPanel {
                heading: "throughput: 3 of 3 within 25%, rank 1".into(),
                unit: String::new(),
                dots: vec![dot(5.66, 5.59), dot(6.31, 6.31), dot(6.58, 6.54)],
            },
        ],
    }
}

#[test]
fn agreement_chart_draws_a_dot_per_point_and_each_panels_heading() {
    let chart = agreement();
    let svg = agreement_chart(&chart).unwrap();
    looks_like_svg(
        &svg,
        &[
            "DiBella 1992",
            "delay: 2 of 3 within 25%",
            "throughput: 3 of 3",
            "paper, ms per request",
            "ours, ms per request",
            "blue circle within 25% of the paper",
        ],
    );
    // A dot per point: within the band a blue circle, outside a vermillion triangle: 8.17 ->
    // 6.68 (-18%) and 4.95 -> 6.14 (+24%) inside, 2.89 -> 2.0 (-31%) outside.
    assert_eq!(svg.matches("<circle").count(), 5);
    assert_eq!(svg.matches("<polygon").count(), 1);
    assert_eq!(
        svg.matches("#D55E00").count(),
        1,
        "one dot outside the band"
    );
    // The lines of equality, and the band's edges in dashes in the delay panel (the throughput
    // panel's fall outside it).
    assert_eq!(svg.matches("stroke=\"#787878\"").count(), 4);
    assert_eq!(svg.matches("stroke-dasharray=\"6,4\"").count(), 2);
    assert_eq!(svg, agreement_chart(&chart).unwrap());
    // A value that is not a number names its panel and point.
    let mut bad = chart.clone();
    bad.panels[1].dots[2].ours = f64::NAN;
    let e = agreement_chart(&bad).unwrap_err();
    assert_eq!(
        e,
        PlotError::NonFinite {
            what: "panel `throughput: 3 of 3 within 25%, rank 1`, point 3, ours".into()
        }
    );
    let empty = AgreementChart {
        panels: vec![AgreementPanel {
            heading: "delay".into(),
            unit: String::new(),
            dots: vec![],
        }],
        ..chart
    };
    assert!(agreement_chart(&empty).unwrap().contains("no data"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn arbitrary_agreement_data_never_panics(
        dots in prop::collection::vec((any::<f64>(), any::<f64>(), any::<bool>()), 0..6),
        band in -1.0..2.0f64,
    ) {
        let chart = AgreementChart {
            title: "p".into(),
            band,
            panels: vec![AgreementPanel {
                heading: "m".into(),
                unit: String::new(),
                dots: dots.iter().map(|&(paper, ours, within)| AgreementDot { paper, ours, within }).collect(),
            }],
        };
        let _ = agreement_chart(&chart);
    }

    #[test]
    fn arbitrary_line_data_never_panics(
        points in prop::collection::vec((any::<f64>(), any::<f64>()), 0..6),
        log_y in any::<bool>(),
    ) {
        let chart = LineChart {
            title: "p".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            log_y,
            log_x: false,
            series: vec![Series { name: "s".into(), points, style: SeriesStyle::Ours }],
            x_names: Vec::new(),
            points_only: false,
            y_range: None,
        };
        let _ = line_chart(&chart);
    }

    #[test]
    fn arbitrary_bar_data_never_panics(
        values in prop::collection::vec(prop::option::of(any::<f64>()), 0..6),
    ) {
        let groups = one_panel("p", "y", values.chunks(2).map(|pair| BarGroup {
            label: "g".into(),
            ours: pair[0],
            paper: pair.get(1).copied().flatten(),
        }).collect());
        let _ = grouped_bars(&groups);
        let stacked = StackedBars {
            title: "p".into(),
            y_label: "y".into(),
            categories: vec!["a".into(), "b".into()],
            bars: values.chunks(2).map(|pair| StackedBar {
                label: "g".into(),
                values: pair.iter().map(|v| v.unwrap_or(0.0)).collect(),
                style: SeriesStyle::Paper,
            }).collect(),
        };
        let _ = stacked_bars(&stacked);
    }
}
