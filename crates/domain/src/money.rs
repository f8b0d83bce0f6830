//! Exact money: an integer number of cents. JSON numbers are parsed from
//! their literal text (never through a binary float) and printed with two
//! decimals.

use rust_decimal::Decimal;
use std::fmt;
use std::str::FromStr;

/// The largest absolute amount accepted on input, for one row.
pub const MAX_ABS_CENTS: i64 = 9_999_999_999_999; // 99,999,999,999.99

/// The largest absolute value of every running total the database keeps:
/// an account's balance, an account's rows of one type summed per day and
/// per month (the schema baseline checks it, under the constraint names in
/// [`TOTAL_CONSTRAINTS`]). A total one row past it is still ~9,000 times
/// inside i64, so no trigger ever overflows, and the few dozen of them a
/// bill or a month sums stay far inside too.
pub const MAX_TOTAL_CENTS: i64 = 1_000_000_000_000_000; // 10,000,000,000,000.00

/// The database constraints that hold running totals to [`MAX_TOTAL_CENTS`],
/// the same names on SQLite and PostgreSQL.
pub const TOTAL_CONSTRAINTS: [&str; 3] = [
    "account_balances_posted_cents_range",
    "day_totals_cents_range",
    "month_totals_cents_range",
];

/// The message of a write refused because it would take a total past
/// [`MAX_TOTAL_CENTS`].
pub const TOTAL_OUT_OF_RANGE: &str = "would take a balance, day or month total of the account \
     past 10000000000000.00 in absolute value; nothing was changed";

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Money(i64);

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MoneyError {
    #[error("must be a number")]
    NotANumber,
    #[error("must have at most 2 decimal places")]
    TooPrecise,
    #[error("must be at most 99999999999.99 in absolute value")]
    TooLarge,
}

impl Money {
    pub const ZERO: Money = Money(0);

    pub const fn from_cents(cents: i64) -> Self {
        Money(cents)
    }

    pub const fn cents(self) -> i64 {
        self.0
    }

    /// Parses the literal text of a JSON number ("12.5", "1e2", "-3.10").
    pub fn parse(text: &str) -> Result<Self, MoneyError> {
        let text = text.trim();
        let valid_json_number = !text.is_empty()
            && text
                .bytes()
                .all(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E'));
        if !valid_json_number {
            return Err(MoneyError::NotANumber);
        }
        let value = if text.contains(['e', 'E']) {
            Decimal::from_scientific(text).map_err(|_| MoneyError::NotANumber)?
        } else {
            // A well-formed plain number that rust_decimal cannot hold has
            // too many digits: far beyond any amount we accept.
            Decimal::from_str_exact(text).map_err(|_| {
                if is_plain_number(text) {
                    MoneyError::TooLarge
                } else {
                    MoneyError::NotANumber
                }
            })?
        };
        let cents = value
            .checked_mul(Decimal::ONE_HUNDRED)
            .ok_or(MoneyError::TooLarge)?;
        if cents.fract() != Decimal::ZERO {
            return Err(MoneyError::TooPrecise);
        }
        let cents = i64::try_from(cents).map_err(|_| MoneyError::TooLarge)?;
        if cents.abs() > MAX_ABS_CENTS {
            return Err(MoneyError::TooLarge);
        }
        Ok(Money(cents))
    }

    pub fn is_positive(self) -> bool {
        self.0 > 0
    }

    pub fn is_negative(self) -> bool {
        self.0 < 0
    }

    pub fn abs(self) -> Money {
        Money(self.0.abs())
    }

    pub fn checked_add(self, other: Money) -> Option<Money> {
        self.0.checked_add(other.0).map(Money)
    }

    pub fn checked_sub(self, other: Money) -> Option<Money> {
        self.0.checked_sub(other.0).map(Money)
    }

    /// Sums and differences of totals saturate: real money never gets
    /// near the end of the range (see [`MAX_TOTAL_CENTS`]).
    pub fn saturating_add(self, other: Money) -> Money {
        Money(self.0.saturating_add(other.0))
    }

    pub fn saturating_sub(self, other: Money) -> Money {
        Money(self.0.saturating_sub(other.0))
    }
}

/// `-?digits(.digits)?`, the JSON number grammar without an exponent.
fn is_plain_number(text: &str) -> bool {
    let unsigned = text.strip_prefix('-').unwrap_or(text);
    let (int, frac) = unsigned.split_once('.').unwrap_or((unsigned, "0"));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    digits(int) && digits(frac)
}

impl std::ops::Neg for Money {
    type Output = Money;
    fn neg(self) -> Money {
        Money(-self.0)
    }
}

impl fmt::Display for Money {
    /// Two decimals, a leading minus for negatives: `-1234.50`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let abs = self.0.unsigned_abs();
        write!(f, "{sign}{}.{:02}", abs / 100, abs % 100)
    }
}

impl FromStr for Money {
    type Err = MoneyError;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Money::parse(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_exact_decimals() {
        assert_eq!(Money::parse("12.5"), Ok(Money(1250)));
        assert_eq!(Money::parse("12.50"), Ok(Money(1250)));
        assert_eq!(Money::parse("0.1"), Ok(Money(10)));
        assert_eq!(Money::parse("-3.07"), Ok(Money(-307)));
        assert_eq!(Money::parse("100"), Ok(Money(10000)));
        assert_eq!(Money::parse("1e2"), Ok(Money(10000)));
        assert_eq!(Money::parse("1.5E1"), Ok(Money(1500)));
        assert_eq!(Money::parse("12.500"), Ok(Money(1250)));
    }

    #[test]
    fn rejects_more_than_two_decimals_and_junk() {
        assert_eq!(Money::parse("1.239"), Err(MoneyError::TooPrecise));
        assert_eq!(Money::parse("0.001"), Err(MoneyError::TooPrecise));
        assert_eq!(Money::parse("\"12\""), Err(MoneyError::NotANumber));
        assert_eq!(Money::parse("true"), Err(MoneyError::NotANumber));
        assert_eq!(Money::parse(""), Err(MoneyError::NotANumber));
        assert_eq!(Money::parse("1e400"), Err(MoneyError::NotANumber));
    }

    #[test]
    fn bounds_the_magnitude() {
        assert_eq!(Money::parse("99999999999.99"), Ok(Money(MAX_ABS_CENTS)));
        assert_eq!(Money::parse("100000000000"), Err(MoneyError::TooLarge));
        assert_eq!(
            Money::parse("99999999999999999999999999999999"),
            Err(MoneyError::TooLarge)
        );
    }

    #[test]
    fn prints_two_decimals() {
        assert_eq!(Money(1250).to_string(), "12.50");
        assert_eq!(Money(-5).to_string(), "-0.05");
        assert_eq!(Money(0).to_string(), "0.00");
        assert_eq!(Money(-123456).to_string(), "-1234.56");
    }

    #[test]
    fn sums_without_float_error() {
        // 0.1 + 0.2 is exactly 0.3 in cents, unlike binary floats.
        let sum = Money::parse("0.1")
            .unwrap()
            .checked_add(Money::parse("0.2").unwrap())
            .unwrap();
        assert_eq!(sum, Money::parse("0.3").unwrap());
    }
}
