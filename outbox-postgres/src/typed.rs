//! Statement parameters that carry their PostgreSQL type.
//!
//! A statement sent without a name (see [`crate::StatementMode::Unnamed`]) is parsed,
//! bound and run in one round trip, so the server cannot be asked for its parameter
//! types first: the client names them in the parse message. Each Rust type the store
//! binds knows its PostgreSQL type here, so a call site writes only the values and the
//! type of a parameter can never disagree with the value bound to it. Both statement
//! modes send the same types, so a test of one mode checks the types of the other.

use chrono::{DateTime, Utc};
use tokio_postgres::types::{ToSql, Type};
use uuid::Uuid;

/// One bound value and the type it is sent as.
pub(crate) type Param<'a> = (&'a (dyn ToSql + Sync), Type);

/// A Rust type the store binds, with the PostgreSQL type it is sent as.
pub(crate) trait PgTyped: ToSql + Sync {
    /// The parameter type named in the parse message.
    const TYPE: Type;
}

/// `value` with its type, for a statement's parameter list.
pub(crate) fn typed<T: PgTyped>(value: &T) -> Param<'_> {
    (value, T::TYPE)
}

macro_rules! pg_typed {
    ($($rust:ty => $scalar:ident, $array:ident;)*) => {
        $(
            impl PgTyped for $rust {
                const TYPE: Type = Type::$scalar;
            }
            impl PgTyped for Option<$rust> {
                const TYPE: Type = Type::$scalar;
            }
            impl PgTyped for Vec<$rust> {
                const TYPE: Type = Type::$array;
            }
            impl PgTyped for Vec<Option<$rust>> {
                const TYPE: Type = Type::$array;
            }
        )*
    };
}

pg_typed! {
    bool => BOOL, BOOL_ARRAY;
    i16 => INT2, INT2_ARRAY;
    i32 => INT4, INT4_ARRAY;
    i64 => INT8, INT8_ARRAY;
    String => TEXT, TEXT_ARRAY;
    Uuid => UUID, UUID_ARRAY;
    Vec<u8> => BYTEA, BYTEA_ARRAY;
    DateTime<Utc> => TIMESTAMPTZ, TIMESTAMPTZ_ARRAY;
    serde_json::Value => JSONB, JSONB_ARRAY;
}

impl PgTyped for &str {
    const TYPE: Type = Type::TEXT;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every type named here is one the bound value accepts: a mismatch would fail at
    /// the first call of every statement binding it.
    #[test]
    fn every_named_type_accepts_its_value() {
        fn accepts<T: PgTyped>() -> bool {
            <T as ToSql>::accepts(&T::TYPE)
        }
        assert!(accepts::<bool>() && accepts::<Vec<bool>>());
        assert!(accepts::<i16>() && accepts::<Vec<i16>>() && accepts::<Option<i16>>());
        assert!(accepts::<i32>() && accepts::<Vec<i32>>());
        assert!(accepts::<i64>() && accepts::<Option<i64>>() && accepts::<Vec<i64>>());
        assert!(accepts::<String>() && accepts::<Option<String>>());
        assert!(accepts::<Vec<Option<String>>>() && accepts::<&str>());
        assert!(accepts::<Uuid>() && accepts::<Option<Uuid>>() && accepts::<Vec<Uuid>>());
        assert!(accepts::<Vec<u8>>() && accepts::<Vec<Vec<u8>>>());
        assert!(accepts::<DateTime<Utc>>() && accepts::<Option<DateTime<Utc>>>());
        assert!(accepts::<Vec<Option<DateTime<Utc>>>>());
        assert!(accepts::<serde_json::Value>() && accepts::<Vec<serde_json::Value>>());
    }
}
