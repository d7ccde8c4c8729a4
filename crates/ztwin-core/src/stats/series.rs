//! Per-interval time series kept as columns (one `Vec<f64>` per metric), ready to cross
//! into a data frame without one object per row.

use serde::Serialize;

/// Named columns of equal length.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(transparent)]
pub struct Series {
    columns: indexmap_like::Columns,
}

impl Series {
    /// Appends `value` to column `name`, creating it (padded with NaN to the current row
    /// count) the first time it is seen. Call `end_row` after each row.
    pub fn set(&mut self, name: &str, value: f64) {
        self.columns.set(name, value);
    }

    /// Closes the current row: columns not set in it get NaN.
    pub fn end_row(&mut self) {
        self.columns.end_row();
    }

    /// Number of complete rows.
    pub fn rows(&self) -> usize {
        self.columns.rows
    }

    /// The column `name`, if any.
    pub fn column(&self, name: &str) -> Option<&[f64]> {
        self.columns.get(name)
    }
}

mod indexmap_like {
    use serde::ser::{Serialize, SerializeMap, Serializer};

    /// Columns in insertion order.
    #[derive(Debug, Clone, Default)]
    pub struct Columns {
        names: Vec<String>,
        values: Vec<Vec<f64>>,
        pub rows: usize,
    }

    impl Columns {
        pub fn set(&mut self, name: &str, value: f64) {
            let i = match self.names.iter().position(|n| n == name) {
                Some(i) => i,
                None => {
                    self.names.push(name.to_string());
                    self.values.push(vec![f64::NAN; self.rows]);
                    self.names.len() - 1
                }
            };
            let col = &mut self.values[i];
            if col.len() == self.rows {
                col.push(value);
            } else {
                // Invariant: col.len() == rows + 1 here (the row is open: a value was pushed for it).
                *col.last_mut().expect("row open") = value;
            }
        }

        pub fn end_row(&mut self) {
            self.rows += 1;
            for col in &mut self.values {
                col.resize(self.rows, f64::NAN);
            }
        }

        pub fn get(&self, name: &str) -> Option<&[f64]> {
            self.names.iter().position(|n| n == name).map(|i| &self.values[i][..])
        }
    }

    impl Serialize for Columns {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let mut m = s.serialize_map(Some(self.names.len()))?;
            for (n, v) in self.names.iter().zip(&self.values) {
                let clean: Vec<Option<f64>> = v.iter().map(|x| x.is_finite().then_some(*x)).collect();
                m.serialize_entry(n, &clean)?;
            }
            m.end()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_stay_aligned() {
        let mut s = Series::default();
        s.set("a", 1.0);
        s.end_row();
        s.set("a", 2.0);
        s.set("b", 3.0);
        s.end_row();
        s.end_row();
        assert_eq!(s.rows(), 3);
        assert_eq!(s.column("a").unwrap().len(), 3);
        let b = s.column("b").unwrap();
        assert!(b[0].is_nan() && b[1] == 3.0 && b[2].is_nan());
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(json, r#"{"a":[1.0,2.0,null],"b":[null,3.0,null]}"#);
    }
}
