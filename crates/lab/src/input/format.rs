//! Numbers for people: measured values and percentages as reports, tables and plots print them.

/// Formats a measured value for people: about four significant digits, no exponent for ordinary
/// magnitudes, thousands separators from 10,000 up, and integers shown whole (`45,374,884`).
///
/// Values below 1e-4 or from 1e15 up use a short exponent form (`1.5e-7`); `NaN` and infinities
/// print as `NaN`, `inf` and `-inf`.
pub fn format_number(x: f64) -> String {
    if x.is_nan() {
        return "NaN".to_string();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    if x == 0.0 {
        return "0".to_string();
    }
    let magnitude = x.abs();
    if !(1e-4..1e15).contains(&magnitude) {
        let text = format!("{x:.3e}");
        return match text.split_once('e') {
            Some((mantissa, exponent)) => format!("{}e{exponent}", trim_zeros(mantissa)),
            None => text,
        };
    }
    if magnitude >= 1000.0 {
        let rounded = format!("{:.0}", x);
        return if magnitude >= 10_000.0 {
            group_thousands(&rounded)
        } else {
            rounded
        };
    }
    // Four significant digits: three decimals for [1, 10), four for [0.1, 1), and so on.
    let exponent = magnitude.log10().floor() as i32;
    let decimals = (3 - exponent).clamp(0, 8) as usize;
    let text = trim_zeros(&format!("{x:.decimals$}")).to_string();
    if text == "-0" {
        "0".to_string()
    } else {
        text
    }
}

/// Formats a fraction as a signed percentage with up to three significant digits, e.g. `+3.8%`.
pub fn format_percent(fraction: f64) -> String {
    if !fraction.is_finite() {
        return format_number(fraction);
    }
    let percent = fraction * 100.0;
    let body = format_number(percent.abs());
    if body == "0" {
        "0%".to_string()
    } else if percent < 0.0 {
        format!("-{body}%")
    } else {
        format!("+{body}%")
    }
}

/// Removes trailing zeros after a decimal point, and the point itself if nothing follows it.
fn trim_zeros(text: &str) -> &str {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        text
    }
}

/// Inserts `,` between groups of three digits in an integer string (with optional sign).
fn group_thousands(digits: &str) -> String {
    let (sign, body) = match digits.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", digits),
    };
    let mut out = String::with_capacity(body.len() + body.len() / 3 + 1);
    for (index, ch) in body.chars().enumerate() {
        if index > 0 && (body.len() - index) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    format!("{sign}{out}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(format_number(8.1710), "8.171");
        assert_eq!(format_number(0.11), "0.11");
        assert_eq!(format_number(62.0), "62");
        assert_eq!(format_number(65.4), "65.4");
        assert_eq!(format_number(1160.0), "1160");
        assert_eq!(format_number(45_374_884.0), "45,374,884");
        assert_eq!(format_number(-2_768_987_855.0), "-2,768,987,855");
        assert_eq!(format_number(0.000_123_4), "0.0001234");
        assert_eq!(format_number(1e-7), "1e-7");
        assert_eq!(format_number(1.5e20), "1.5e20");
        assert_eq!(format_number(0.0), "0");
        assert_eq!(format_number(-0.0), "0");
        assert_eq!(format_number(f64::NAN), "NaN");
        assert_eq!(format_number(f64::NEG_INFINITY), "-inf");
        assert_eq!(format_number(0.1 + 0.2), "0.3");
        assert_eq!(format_number(999.96), "1000");
    }

    #[test]
    fn percentages_are_signed() {
        assert_eq!(format_percent(0.038), "+3.8%");
        assert_eq!(format_percent(-0.5), "-50%");
        assert_eq!(format_percent(0.0), "0%");
    }
}
