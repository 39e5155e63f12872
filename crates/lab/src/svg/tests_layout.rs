//! Tests of what a reader sees: a panel and a y-axis title per measure, labels that stay
//! distinct, titles within the canvas, whole-number ticks on whole-number axes, log axes that
//! say so, marks for zero and missing bars, and legends of what is drawn.
use super::tests::one_panel;
use super::*;

/// The text of every `<text>` element, in order.
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = &t[t.find('>')? + 1..t.find("</text>")?];
            Some(body.trim().replace("&amp;", "&").replace("&apos;", "'"))
        })
        .collect()
}

/// The canvas's width.
fn canvas_width(svg: &str) -> u32 {
    let at = svg.find("width=\"").unwrap() + 7;
    svg[at..].split('"').next().unwrap().parse().unwrap()
}

fn group(label: &str, ours: Option<f64>, paper: Option<f64>) -> BarGroup {
    BarGroup {
        label: label.into(),
        ours,
        paper,
    }
}

/// DiBella's Table 4 in small: three measures (ms, requests per ms, % off balanced) over the
/// same points, whose labels share their keys.
fn three_measures() -> GroupedBars {
    let labels = [
        "scheduler=primary-sequential/client=primary-random",
        "scheduler=primary-sequential/client=primary-fixed",
        "scheduler=primary-sequential/client=sequential",
        "scheduler=static/client=static",
    ];
    let panel = |y_label: &str, f: fn(usize) -> f64| BarPanel {
        y_label: y_label.into(),
        groups: labels
            .iter()
            .enumerate()
            .map(|(i, l)| group(l, Some(f(i)), Some(f(i) * 1.1)))
            .collect(),
    };
    GroupedBars {
        title: "Table 4: non-uniform asynchronous NULL requests, 3 schedulers and 10 clients \
                (delay ms/request, throughput requests/ms, load % off balanced per scheduler)"
            .into(),
        panels: vec![
            panel("ms per request", |i| 3.0 + i as f64),
            panel("throughput", |i| 6.0 - 0.1 * i as f64),
            panel("load 0", |i| i as f64 - 2.5),
        ],
    }
}

#[test]
fn a_bar_chart_of_several_measures_has_a_y_axis_title_per_measure() {
    let svg = grouped_bars(&three_measures()).unwrap();
    let all = texts(&svg);
    for title in ["ms per request", "throughput", "load 0"] {
        assert_eq!(all.iter().filter(|t| *t == title).count(), 1, "{title}");
    }
    // One legend for the chart, the keys shared by every label said once per label row.
    assert_eq!(all.iter().filter(|t| *t == "ours").count(), 1);
    assert!(
        all.contains(&"labels: scheduler, client".to_string()),
        "{all:?}"
    );
    assert_eq!(svg, grouped_bars(&three_measures()).unwrap());
}

#[test]
fn no_two_points_get_the_same_label() {
    let svg = grouped_bars(&three_measures()).unwrap();
    let all = texts(&svg);
    let shown: Vec<&String> = all
        .iter()
        .filter(|t| t.starts_with("primary-") || t.starts_with("static,"))
        .collect();
    // Three panels side by side, each labelling its four points: four labels, three times each.
    assert_eq!(shown.len(), 12, "{shown:?}");
    let mut unique = shown.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 4, "{shown:?}");
    assert!(all.contains(&"primary-sequential, primary-random".to_string()));
    // Stacked in one column (30 points), long labels show once, under the last panel.
    let mut many = three_measures();
    for panel in &mut many.panels {
        let first = panel.groups[0].clone();
        panel.groups = (0..30)
            .map(|i| BarGroup {
                label: format!("{}-{i}", first.label),
                ..first.clone()
            })
            .collect();
    }
    let all = texts(&grouped_bars(&many).unwrap());
    let shown: Vec<&String> = all.iter().filter(|t| t.starts_with("primary")).collect();
    assert_eq!(shown.len(), 30, "{shown:?}");
    // Labels that differ only in their middle keep it, or enough of it.
    let long: Vec<String> = (0..3)
        .map(|i| format!("a-very-long-common-prefix-{i}-and-a-very-long-common-suffix"))
        .collect();
    let short = distinct_labels(&long, 20);
    assert!(short.iter().all(|s| s.contains('…')), "{short:?}");
    for (i, s) in short.iter().enumerate() {
        assert!(short[..i].iter().all(|t| t != s), "{short:?}");
    }
    // Equal labels stay equal; shared `key=` parts go only where every label has them.
    let mixed = category_labels(&["x=1/a".into(), "x=2/b".into()]);
    assert_eq!(mixed.labels, ["x=1/a", "x=2/b"]);
    assert_eq!(mixed.parts, None);
}

/// The lines of the title: the texts at the title's size.
fn title_texts(svg: &str) -> Vec<String> {
    let size = format!("font-size=\"{}\"", TITLE_SIZE as f64 / 1.24);
    svg.split("<text")
        .skip(1)
        .filter(|t| t[..t.find('>').unwrap()].contains(&size))
        .filter_map(|t| Some(t[t.find('>')? + 1..t.find("</text>")?].trim().to_string()))
        .collect()
}

#[test]
fn titles_wrap_within_the_canvas_and_lose_nothing() {
    let long = three_measures().title;
    let longer = format!("{long} {long}");
    let line = |title: &str, series: bool| LineChart {
        title: title.into(),
        x_label: "x".into(),
        y_label: "y".into(),
        log_y: false,
        log_x: false,
        series: if series {
            vec![Series {
                name: "s".into(),
                points: vec![(1.0, 1.0), (2.0, 2.0)],
                style: SeriesStyle::Ours,
            }]
        } else {
            Vec::new()
        },
        x_names: Vec::new(),
        points_only: false,
        y_range: None,
    };
    let mut narrow = one_panel("", "y", vec![group("a", Some(1.0), None)]);
    narrow.title = long.clone();
    let drawn = [
        (grouped_bars(&three_measures()).unwrap(), &long),
        (grouped_bars(&narrow).unwrap(), &long),
        (line_chart(&line(&longer, true)).unwrap(), &longer),
        (line_chart(&line(&long, false)).unwrap(), &long),
        (empty_chart(&long, "no data").unwrap(), &long),
    ];
    for (svg, title) in drawn {
        let width = canvas_width(&svg);
        let lines = title_texts(&svg);
        assert!((2..=3).contains(&lines.len()), "{lines:?}");
        for line in &lines {
            let estimate = line.chars().count() as u32 * TITLE_CHAR_WIDTH;
            assert!(estimate + 20 <= width, "{line} in {width}");
        }
        assert_eq!(lines.join(" "), *title);
    }
}

#[test]
fn whole_number_axes_have_whole_number_ticks() {
    let axis = ValueAxis::linear(3.0, 7.0, false, "x")
        .unwrap()
        .integer(true);
    let ticks = axis.key_points(BoldPoints(10));
    assert!(ticks.len() >= 3, "{ticks:?}");
    assert!(ticks.iter().all(|t| t.fract() == 0.0), "{ticks:?}");
    let seeds = LineChart {
        title: "across seeds".into(),
        x_label: "seed".into(),
        y_label: "rank correlation".into(),
        log_y: false,
        log_x: false,
        series: vec![Series {
            name: "t: delay".into(),
            points: vec![(1.0, 0.98), (2.0, 0.982), (3.0, 0.989)],
            style: SeriesStyle::Ours,
        }],
        x_names: Vec::new(),
        points_only: true,
        y_range: Some((-1.0, 1.0)),
    };
    let all = texts(&line_chart(&seeds).unwrap());
    assert!(!all.iter().any(|t| t == "1.5" || t == "2.5"), "{all:?}");
    // The correlation's axis runs from -1 to 1, not 0.98 to 0.99.
    assert!(all.contains(&"-1".to_string()) && all.contains(&"1".to_string()));
    assert!(!all.iter().any(|t| t.starts_with("0.98")), "{all:?}");
}

#[test]
fn wide_spans_get_a_log_axis_that_says_so_with_enough_ticks() {
    let wide = one_panel(
        "Weibel",
        "cycles",
        vec![
            group("1x", Some(66.0), Some(90.0)),
            group("4x", Some(2.7e9), Some(2.5e9)),
        ],
    );
    let all = texts(&grouped_bars(&wide).unwrap());
    assert!(all.contains(&"cycles (log scale)".to_string()), "{all:?}");
    assert!(all.contains(&"1G".to_string()), "{all:?}");
    // Points from 32 to 375 on a log axis: ticks below 50 and above 200.
    let axis = ValueAxis::logarithmic(32.0, 375.0);
    let ticks = axis.key_points(BoldPoints(10));
    assert!(ticks.iter().any(|t| *t < 50.0) && ticks.iter().any(|t| *t > 200.0));
    assert!(ticks.len() >= 4, "{ticks:?}");
    // George's Figure 5, 29 to 1,240: a tick below 50 as well.
    let ticks = ValueAxis::logarithmic(29.0, 1240.0).key_points(BoldPoints(10));
    assert!(ticks.iter().any(|t| *t < 50.0), "{ticks:?}");
    // 2,000 to 9,999 grouped as 10,000 is.
    assert_eq!(tick_text(5000.0, 5000.0), "5,000");
    assert_eq!(tick_text(2.5e9, 3e9), "2.5G");
    // Negative values stay on a linear axis around 0.
    let loads = one_panel("t", "load", vec![group("a", Some(-3.0), Some(300.0))]);
    let all = texts(&grouped_bars(&loads).unwrap());
    assert!(all.contains(&"load".to_string()) && all.contains(&"0".to_string()));
}

#[test]
fn zero_and_missing_bars_are_marked_and_legends_list_what_is_drawn() {
    let spec = one_panel(
        "t",
        "y",
        vec![group("a", Some(0.0), None), group("b", None, None)],
    );
    let all = texts(&grouped_bars(&spec).unwrap());
    // No paper value anywhere: no paper in the legend, and its absence is not marked.
    assert!(!all.contains(&"paper".to_string()), "{all:?}");
    assert_eq!(all.iter().filter(|t| *t == "n/a").count(), 2, "{all:?}");
    assert!(all.contains(&"zero".to_string()), "{all:?}");
    // Stacked: a category no bar shows is left out of the legend, one only the paper's bars
    // show is drawn as theirs, and a sum a hair past 100 keeps the axis at 100.
    let stacked = StackedBars {
        title: "t".into(),
        y_label: "%".into(),
        categories: vec!["useful".into(), "unused".into(), "rest".into()],
        bars: vec![
            StackedBar {
                label: "a ours".into(),
                values: vec![60.0, 0.0, 40.000_000_01],
                style: SeriesStyle::Ours,
            },
            StackedBar {
                label: "b ours".into(),
                values: vec![0.0, 0.0, 0.0],
                style: SeriesStyle::Ours,
            },
        ],
    };
    let all = texts(&stacked_bars(&stacked).unwrap());
    assert!(!all.contains(&"unused".to_string()), "{all:?}");
    assert!(all.contains(&"a bar of zeros".to_string()), "{all:?}");
    assert!(all.contains(&"100".to_string()) && !all.contains(&"105".to_string()));
}

#[test]
fn series_have_their_own_marker_shapes_and_names() {
    let series = |name: &str, k: f64| Series {
        name: name.into(),
        points: vec![(1.0, k), (2.0, k + 1.0)],
        style: SeriesStyle::Ours,
    };
    let chart = LineChart {
        title: "t".into(),
        x_label: "x".into(),
        y_label: "y".into(),
        log_y: false,
        log_x: false,
        series: vec![series("", 1.0), series("b", 2.0), series("c", 3.0)],
        x_names: Vec::new(),
        points_only: false,
        y_range: None,
    };
    let svg = line_chart(&chart).unwrap();
    // Circles for the first, squares and triangles (polygons) for the others.
    assert_eq!(svg.matches("<circle").count(), 3);
    assert_eq!(svg.matches("<polygon").count(), 6);
    // A series without a name is called by whose it is.
    assert!(texts(&svg).contains(&"ours".to_string()));
    // The paper's dashes are whole lines with a dash pattern.
    assert!(line_chart(&super::tests::black_chart())
        .unwrap()
        .contains("stroke-dasharray=\"8,5\""));
}

#[test]
fn the_agreement_plot_is_square() {
    let svg = agreement_chart(&super::tests::agreement()).unwrap();
    // The line of equality: its two ends as far apart across as up.
    let line = svg
        .split("<polyline")
        .find(|p| p.contains("stroke=\"#787878\"") && !p.contains("dasharray"))
        .unwrap();
    let points = line
        .split("points=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    let ends: Vec<(i32, i32)> = points
        .split_whitespace()
        .map(|p| {
            let (x, y) = p.split_once(',').unwrap();
            (x.parse().unwrap(), y.parse().unwrap())
        })
        .collect();
    let (dx, dy) = (ends[1].0 - ends[0].0, ends[0].1 - ends[1].1);
    assert!(dx > 200 && (dx - dy).abs() <= 2, "{ends:?}");
}

#[test]
fn a_doubling_parameter_can_have_a_log_x_axis() {
    let chart = |log_x: bool, first: f64| LineChart {
        title: "processors".into(),
        x_label: "processors".into(),
        y_label: "ms".into(),
        log_y: false,
        log_x,
        series: vec![Series {
            name: "central".into(),
            points: [first, 2.0, 4.0, 16.0, 64.0, 256.0]
                .iter()
                .map(|&p| (p, 100.0 + p))
                .collect(),
            style: SeriesStyle::Ours,
        }],
        x_names: Vec::new(),
        points_only: false,
        y_range: None,
    };
    let all = texts(&line_chart(&chart(true, 1.0)).unwrap());
    assert!(all.iter().any(|t| t == "processors (log scale)"), "{all:?}");
    assert!(
        all.iter().any(|t| t == "10") && all.iter().any(|t| t == "100"),
        "{all:?}"
    );
    let linear = texts(&line_chart(&chart(false, 1.0)).unwrap());
    assert!(linear.iter().any(|t| t == "processors"), "{linear:?}");
    // Zero has no place on a log axis: refused, naming the point.
    let e = line_chart(&chart(true, 0.0)).unwrap_err();
    assert!(e.to_string().contains("x"), "{e}");
}
