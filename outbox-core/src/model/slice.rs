//! Disjoint slices of an outbox: which entries a drain of slice `i` of `N` takes.
//!
//! Every entry belongs to exactly one slice of `N`: the one its **slice hash** falls in,
//! `slice_hash % N`. The slice hash is the 32-bit FNV-1a hash of the entry's partition
//! key (its UTF-8 bytes), or of the 16 bytes of its id (in the UUID's own byte order) when
//! it has no key. FNV-1a is a few lines in any language, so a host can route a key to
//! the drain that owns it, or a consumer check where an entry came from, without this
//! crate: start from 2166136261 (`0x811c9dc5`), and for each byte XOR it in and multiply
//! by 16777619 (`0x01000193`), modulo 2^32.
//!
//! Entries of one key always share a slice, so N drains over the N slices of a table
//! each see whole keys, and together see every entry exactly once.

use std::fmt;
use std::str::FromStr;

use crate::{EntryId, OutboxError, Result};

/// The most slices a table can be cut into.
pub const MAX_SLICES: u32 = 4096;

/// Slice `index` of `count` (written `index/count`, from `0/count` to `count-1/count`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Slice {
    index: u32,
    count: u32,
}

impl Slice {
    /// Slice `index` of `count`; `count` from 1 to [`MAX_SLICES`], `index` below it.
    pub fn new(index: u32, count: u32) -> Result<Self> {
        if count == 0 || count > MAX_SLICES {
            return Err(OutboxError::invalid(
                "slice",
                format!("the slice count must be from 1 to {MAX_SLICES}, not {count}"),
            ));
        }
        if index >= count {
            return Err(OutboxError::invalid(
                "slice",
                format!(
                    "slice {index} of {count} does not exist (slices are 0 to {})",
                    count - 1
                ),
            ));
        }
        Ok(Self { index, count })
    }

    /// Which slice this is, from 0.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// How many slices the table is cut into.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// Whether an entry with this partition key and id belongs to this slice.
    pub fn contains(&self, partition_key: Option<&str>, id: EntryId) -> bool {
        slice_hash(partition_key, id) % self.count == self.index
    }
}

impl fmt::Display for Slice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Slice {
    type Err = OutboxError;

    /// Parses `index/count`, such as `0/4`.
    fn from_str(text: &str) -> Result<Self> {
        let bad = || {
            OutboxError::invalid(
                "slice",
                format!("{text:?} is not INDEX/COUNT (such as 0/4)"),
            )
        };
        let (index, count) = text.split_once('/').ok_or_else(bad)?;
        let index = index.trim().parse().map_err(|_| bad())?;
        let count = count.trim().parse().map_err(|_| bad())?;
        Self::new(index, count)
    }
}

/// The slice hash of an entry (see the module comment): FNV-1a, 32 bits, over the
/// partition key's UTF-8 bytes, or over the id's 16 bytes when there is no key.
pub fn slice_hash(partition_key: Option<&str>, id: EntryId) -> u32 {
    match partition_key {
        Some(key) => fnv1a(key.as_bytes()),
        None => fnv1a(id.as_uuid().as_bytes()),
    }
}

fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5_u32, |hash, &b| {
        (hash ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_fnv1a_as_published() {
        // The published FNV-1a 32-bit test vectors.
        assert_eq!(fnv1a(b""), 0x811c_9dc5);
        assert_eq!(fnv1a(b"a"), 0xe40c_292c);
        assert_eq!(fnv1a(b"foobar"), 0xbf9c_f968);
        let id = EntryId::from_uuid(uuid::Uuid::from_bytes([0; 16]));
        assert_eq!(slice_hash(None, id), fnv1a(&[0; 16]));
        assert_eq!(slice_hash(Some("foobar"), id), 0xbf9c_f968);
    }

    #[test]
    fn every_entry_is_in_exactly_one_slice() {
        for n in [1, 2, 3, 7, 64] {
            for k in 0..200 {
                let key = format!("order-{k}");
                let id = EntryId::new();
                for key in [Some(key.as_str()), None] {
                    let homes = (0..n)
                        .filter(|&i| Slice::new(i, n).unwrap().contains(key, id))
                        .count();
                    assert_eq!(homes, 1, "{key:?} in {n} slices");
                }
            }
        }
    }

    #[test]
    fn slices_parse_and_refuse_what_does_not_exist() {
        assert_eq!("1/4".parse::<Slice>().unwrap(), Slice::new(1, 4).unwrap());
        assert_eq!(Slice::new(3, 4).unwrap().to_string(), "3/4");
        for bad in ["4/4", "0/0", "1", "a/4", "1/b", "-1/4", "0/5000", ""] {
            let err = bad.parse::<Slice>().unwrap_err();
            assert!(err.is_invalid_input(), "{bad}: {err}");
        }
    }
}
