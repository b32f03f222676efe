//! Finding a row's columns by name, cheaply: an entry is read in the table's column order,
//! so a search that starts just after the column found last finds each name at its first
//! comparison, where a driver's own lookup by name compares it with every column before it
//! (and some drivers ask the database for each name on every read).

use std::cell::Cell;

/// Where the next column of one row is looked for first. One per row read.
#[derive(Debug, Default)]
pub struct ColumnCursor {
    next: Cell<usize>,
}

impl ColumnCursor {
    /// A cursor at the row's first column.
    pub fn new() -> Self {
        Self::default()
    }

    /// The index of `column` among a row's `count` columns, whose names `name` gives by
    /// index: looked for from just after the column found last, then from the start.
    /// Errs, saying which column, when the row has no such column.
    pub fn find<'n>(
        &self,
        column: &str,
        count: usize,
        name: impl Fn(usize) -> &'n str,
    ) -> Result<usize, String> {
        let start = self.next.get().min(count);
        let index = (start..count)
            .chain(0..start)
            .find(|&i| name(i) == column)
            .ok_or_else(|| format!("no column {column:?} in the row"))?;
        self.next.set(index + 1);
        Ok(index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: [&str; 4] = ["id", "topic", "payload", "status"];

    fn find(cursor: &ColumnCursor, column: &str) -> Result<usize, String> {
        cursor.find(column, NAMES.len(), |i| NAMES[i])
    }

    #[test]
    fn columns_are_found_in_order_and_out_of_order() {
        let cursor = ColumnCursor::new();
        assert_eq!(find(&cursor, "id"), Ok(0));
        assert_eq!(find(&cursor, "topic"), Ok(1));
        assert_eq!(find(&cursor, "status"), Ok(3));
        // Past the end, then back to the start.
        assert_eq!(find(&cursor, "payload"), Ok(2));
        assert_eq!(find(&cursor, "id"), Ok(0));
    }

    #[test]
    fn a_missing_column_is_named_and_moves_nothing() {
        let cursor = ColumnCursor::new();
        assert_eq!(find(&cursor, "topic"), Ok(1));
        let err = find(&cursor, "headers").unwrap_err();
        assert!(err.contains("\"headers\""), "{err}");
        // The cursor stayed after "topic": the next column is found at the first name
        // compared.
        let compared = std::cell::Cell::new(0);
        let found = cursor.find("payload", NAMES.len(), |i| {
            compared.set(compared.get() + 1);
            NAMES[i]
        });
        assert_eq!((found, compared.get()), (Ok(2), 1));
    }

    #[test]
    fn a_row_without_columns_has_none() {
        let cursor = ColumnCursor::new();
        assert!(cursor.find("id", 0, |_| unreachable!()).is_err());
    }
}
