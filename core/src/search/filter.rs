//! Date validation for search filters and frontmatter dates.

/// Checks that `value` is a real calendar date written `YYYY-MM-DD`.
pub fn validate_date(field: &str, value: &str) -> Result<(), String> {
    let err = || format!("{field} must be a date written YYYY-MM-DD, got {value:?}");
    let bytes = value.as_bytes();
    let digits_ok = bytes.len() == 10
        && bytes[4] == b'-'
        && bytes[7] == b'-'
        && bytes
            .iter()
            .enumerate()
            .all(|(idx, b)| idx == 4 || idx == 7 || b.is_ascii_digit());
    if !digits_ok {
        return Err(err());
    }
    let number =
        |range: std::ops::Range<usize>| value.get(range).and_then(|s| s.parse::<u32>().ok());
    let (Some(year), Some(month), Some(day)) = (number(0..4), number(5..7), number(8..10)) else {
        return Err(err());
    };
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days_in_month = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return Err(err()),
    };
    if day == 0 || day > days_in_month {
        return Err(err());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        for ok in ["2024-02-29", "2000-02-29", "1999-12-31", "2025-01-01"] {
            assert_eq!(validate_date("date_from", ok), Ok(()), "{ok}");
        }
        for bad in [
            "2023-02-29",
            "1900-02-29",
            "2024-13-01",
            "2024-00-10",
            "2024-04-31",
            "2024-1-01",
            "24-01-01",
            "2024/01/01",
            "",
            "2024-01-01T00",
            "２０２４-01-01",
        ] {
            assert_eq!(
                validate_date("date_from", bad),
                Err(format!(
                    "date_from must be a date written YYYY-MM-DD, got {bad:?}"
                )),
                "{bad}"
            );
        }
    }
}
