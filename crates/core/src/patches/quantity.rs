//! Resource quantities (`k8s.io/apimachinery/pkg/api/resource.Quantity`) as a `v1.Pod` round trip
//! rewrites them: `0.5` becomes `500m`, `2000m` becomes `2`, `1024Mi` becomes `1Gi`, while values
//! already in canonical form keep their spelling.

/// The canonical text of a quantity, or Go's parse error text.
pub(crate) fn canonical(s: &str) -> Result<String, super::ApplyError> {
    let q = parse(s).ok_or_else(|| {
        super::ApplyError::Decode(
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
                .to_string(),
        )
    })?;
    if q.keep_spelling {
        return Ok(s.to_string());
    }
    Ok(q.format())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    DecimalSi,
    BinarySi,
    DecimalExponent,
}

/// `value × 10^scale` exactly, in the format the text used.
#[derive(Debug)]
struct Quantity {
    value: i128,
    scale: i32,
    format: Format,
    keep_spelling: bool,
}

fn parse(s: &str) -> Option<Quantity> {
    let (positive, rest) = match s.as_bytes().first()? {
        b'-' => (false, &s[1..]),
        b'+' => (true, &s[1..]),
        _ => (true, s),
    };
    let num_end = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    let (num, after) = rest.split_at(num_end);
    let (denom, suffix) = match after.strip_prefix('.') {
        Some(a) => {
            let e = a.find(|c: char| !c.is_ascii_digit()).unwrap_or(a.len());
            a.split_at(e)
        }
        None => ("", after),
    };
    if num.is_empty() && denom.is_empty() {
        return None;
    }
    let (base, exponent, format) = parse_suffix(suffix)?;
    let digits = format!("{num}{denom}");
    let digits = if digits.is_empty() {
        "0".to_string()
    } else {
        digits
    };
    let mut value: i128 = digits.parse().ok()?;
    let mut scale = -(denom.len() as i32);
    if base == 10 {
        scale += exponent;
    } else {
        // A binary multiplier: fold it into the value (fractions are kept exact in decimal).
        value = value.checked_mul(1i128.checked_shl(exponent as u32)?)?;
    }
    if !positive {
        value = -value;
    }
    let keep_spelling = match format {
        Format::BinarySi => denom.is_empty() && exponent % 10 == 0 && (digits.parse::<i128>().ok()? & 7) != 0,
        _ => scale % 3 == 0 && !digits.ends_with("000") && !digits.starts_with('0'),
    };
    Some(Quantity {
        value,
        scale,
        format,
        keep_spelling,
    })
}

fn parse_suffix(s: &str) -> Option<(i32, i32, Format)> {
    let si = |e| Some((10, e, Format::DecimalSi));
    let bin = |e| Some((2, e, Format::BinarySi));
    match s {
        "" => si(0),
        "n" => si(-9),
        "u" => si(-6),
        "m" => si(-3),
        "k" => si(3),
        "M" => si(6),
        "G" => si(9),
        "T" => si(12),
        "P" => si(15),
        "E" => si(18),
        "Ki" => bin(10),
        "Mi" => bin(20),
        "Gi" => bin(30),
        "Ti" => bin(40),
        "Pi" => bin(50),
        "Ei" => bin(60),
        _ => {
            let e = s.strip_prefix(['e', 'E'])?;
            let n: i32 = e.parse().ok()?;
            Some((10, n, Format::DecimalExponent))
        }
    }
}

impl Quantity {
    fn format(&self) -> String {
        let (mut value, mut scale) = (self.value, self.scale);
        // Quantities carry at most nano precision, rounded up (away from zero).
        if scale < -9 {
            let div = 10i128.pow((-9 - scale) as u32);
            let q = value / div;
            value = if value % div != 0 { q + value.signum() } else { q };
            scale = -9;
        }
        let mut format = self.format;
        if format == Format::BinarySi {
            let integral = scale >= 0 || value % 10i128.pow((-scale) as u32) == 0;
            let abs = if scale >= 0 {
                value.abs().saturating_mul(10i128.pow(scale as u32))
            } else {
                value.abs() / 10i128.pow((-scale) as u32)
            };
            if abs < 1024 || !integral {
                format = Format::DecimalSi;
            } else {
                let mut n = if scale >= 0 {
                    value * 10i128.pow(scale as u32)
                } else {
                    value / 10i128.pow((-scale) as u32)
                };
                let mut exp = 0;
                while n != 0 && n % 1024 == 0 && exp < 6 {
                    n /= 1024;
                    exp += 1;
                }
                let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][exp];
                return format!("{n}{suffix}");
            }
        }
        while value != 0 && value % 10 == 0 {
            value /= 10;
            scale += 1;
        }
        if value == 0 {
            scale = 0;
        }
        match scale.rem_euclid(3) {
            1 => {
                value *= 10;
                scale -= 1;
            }
            2 => {
                value *= 100;
                scale -= 2;
            }
            _ => {}
        }
        let suffix = match format {
            Format::DecimalExponent => {
                if scale == 0 {
                    String::new()
                } else {
                    format!("e{scale}")
                }
            }
            _ => match scale {
                -9 => "n".into(),
                -6 => "u".into(),
                -3 => "m".into(),
                0 => String::new(),
                3 => "k".into(),
                6 => "M".into(),
                9 => "G".into(),
                12 => "T".into(),
                15 => "P".into(),
                18 => "E".into(),
                other => format!("e{other}"),
            },
        };
        format!("{value}{suffix}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_forms() {
        for (input, want) in [
            ("0.5", "500m"),
            ("2000m", "2"),
            ("100m", "100m"),
            ("1024Mi", "1Gi"),
            ("100Mi", "100Mi"),
            ("1.5Gi", "1536Mi"),
            ("1", "1"),
            ("1000", "1k"),
            ("1e3", "1e3"),
            ("0", "0"),
            ("512", "512"),
            ("2048", "2048"),
        ] {
            assert_eq!(canonical(input).as_deref(), Ok(want), "{input}");
        }
        assert!(canonical("abc").is_err());
    }
}
