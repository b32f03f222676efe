//! Which partition a key goes to: the hash the Java client's default partitioner uses, so
//! a key lands where every other producer of the topic puts it.

/// Kafka's 32-bit murmur2 of `data` (seed `0x9747b28c`), as the Java client computes it.
pub fn murmur2(data: &[u8]) -> i32 {
    const SEED: u32 = 0x9747_b28c;
    const M: u32 = 0x5bd1_e995;
    const R: u32 = 24;
    let length = u32::try_from(data.len()).unwrap_or(u32::MAX);
    let mut h = SEED ^ length;
    let mut chunks = data.chunks_exact(4);
    for chunk in &mut chunks {
        let mut k = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M);
        h ^= k;
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        for (i, byte) in tail.iter().enumerate().rev() {
            h ^= u32::from(*byte) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^= h >> 15;
    i32::from_ne_bytes(h.to_ne_bytes())
}

/// The partition of `key` among `partitions` (at least one): the positive part of its
/// murmur2 hash, modulo the count.
pub fn partition_for(key: &[u8], partitions: i32) -> i32 {
    let positive = murmur2(key) & 0x7fff_ffff;
    positive % partitions.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The values Kafka's own test suite pins for its murmur2.
    #[test]
    fn the_hash_is_the_java_clients() {
        for (key, hash) in [
            ("21", -973_932_308),
            ("foobar", -790_332_482),
            ("a-little-bit-long-string", -985_981_536),
            ("a-little-bit-longer-string", -1_486_304_829),
            (
                "lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8",
                -58_897_971,
            ),
            ("abc", 479_470_107),
        ] {
            assert_eq!(murmur2(key.as_bytes()), hash, "{key}");
        }
    }

    #[test]
    fn partitions_are_in_range_and_stable() {
        for n in 1..=12 {
            for key in ["", "a", "order-17", "0190f5e2-7c3b-7d2a-9c1e-3f4b5a6c7d8e"] {
                let p = partition_for(key.as_bytes(), n);
                assert!((0..n).contains(&p), "{key} over {n}: {p}");
                assert_eq!(p, partition_for(key.as_bytes(), n));
            }
        }
        // (-790332482 & 0x7fffffff) % 50
        assert_eq!(partition_for(b"foobar", 50), 16);
    }
}
