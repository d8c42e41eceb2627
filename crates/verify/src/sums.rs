//! The checksum fields of fio 3.33, each defined by what fio 3.33 writes (checked against the
//! golden blocks in tests/golden), not by the algorithms' textbook outputs.

use crate::Kind;
use crc::{Algorithm, Crc, Table};
use md5::Digest as _;

/// fio's crc32: MSB-first, polynomial 0x04C11DB7, init 0, no final XOR, no length
/// (the bitwise NOT of CRC-32/POSIX; check value 0x89a1897f). Not in the catalogue.
const CRC_32_FIO: Algorithm<u32> = Algorithm {
    width: 32,
    poly: 0x04c1_1db7,
    init: 0,
    refin: false,
    refout: false,
    xorout: 0,
    check: 0x89a1_897f,
    residue: 0,
};

// Slice-by-16 tables: these run over whole intervals on the per-I/O path.
static CRC64: Crc<u64, Table<16>> = Crc::<u64, Table<16>>::new(&crc::CRC_64_REDIS);
static CRC32: Crc<u32, Table<16>> = Crc::<u32, Table<16>>::new(&CRC_32_FIO);
static CRC16: Crc<u16, Table<16>> = Crc::<u16, Table<16>>::new(&crc::CRC_16_ARC);
static CRC7: Crc<u8, Table<16>> = Crc::<u8, Table<16>>::new(&crc::CRC_7_MMC);

/// fio's crc32c (header CRC and verify=crc32c): CRC-32C without the final inversion.
pub fn fio_crc32c(data: &[u8]) -> u32 {
    crc32c::crc32c(data) ^ 0xffff_ffff
}

/// Writes kind's field for `data` into `out` (`out.len() == kind.field_len()`).
pub fn compute(kind: Kind, data: &[u8], out: &mut [u8]) {
    match kind {
        Kind::Md5 => out.copy_from_slice(&md5::Md5::digest(data)),
        Kind::Crc64 => out.copy_from_slice(&CRC64.checksum(data).to_le_bytes()),
        Kind::Crc32 => out.copy_from_slice(&CRC32.checksum(data).to_le_bytes()),
        Kind::Crc32c | Kind::Crc32cIntel => out.copy_from_slice(&fio_crc32c(data).to_le_bytes()),
        Kind::Crc16 => out.copy_from_slice(&CRC16.checksum(data).to_le_bytes()),
        Kind::Crc7 => out[0] = CRC7.checksum(data),
        Kind::Sha256 => sha256_quirk(data, out),
        Kind::Sha512 => sha512_quirk(data, out),
        Kind::Sha3_224 => out.copy_from_slice(&sha3::Sha3_224::digest(data)),
        Kind::Sha3_256 => out.copy_from_slice(&sha3::Sha3_256::digest(data)),
        Kind::Sha3_384 => out.copy_from_slice(&sha3::Sha3_384::digest(data)),
        Kind::Sha3_512 => out.copy_from_slice(&sha3::Sha3_512::digest(data)),
        Kind::Xxhash => out.copy_from_slice(&xxhash_rust::xxh32::xxh32(data, 1).to_le_bytes()),
        Kind::Sha1 => {
            let d = sha1::Sha1::digest(data);
            for (o, w) in out.chunks_exact_mut(4).zip(d.chunks_exact(4)) {
                o.copy_from_slice(&[w[3], w[2], w[1], w[0]]);
            }
        }
        Kind::Meta | Kind::Pattern | Kind::PatternHdr | Kind::Null => {}
    }
}

/// SHA-512 of `data`, the work fio's sha512 does (its verify field is not the digest, see
/// [`sha512_quirk`]); for `--crctest`, which times the hashing.
pub fn sha512_digest(data: &[u8]) -> [u8; 64] {
    sha2::Sha512::digest(data).into()
}

/// fio 3.33's sha256 field (64 bytes). SHA-256's compression runs over the data, then a final
/// block made of the data's last `len % 64` bytes, 0x80, zeros and the bit length stored
/// **little-endian** (a second block when the tail leaves no room for the length); the field
/// is that last block with its first 8 bytes replaced by the low byte of each of the 8 state
/// words. It changes with every data bit (through the compression) but is not SHA-256.
fn sha256_quirk(data: &[u8], out: &mut [u8]) {
    const H0: [u32; 8] =
        [0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19];
    let mut state = H0;
    let blocks = data.chunks_exact(64);
    let tail = blocks.remainder();
    for b in blocks {
        let b: &[u8; 64] = b.try_into().expect("64-byte chunk");
        sha2::block_api::compress256(&mut state, std::slice::from_ref(b));
    }
    let mut last = [0u8; 64];
    last[..tail.len()].copy_from_slice(tail);
    last[tail.len()] = 0x80;
    if tail.len() >= 56 {
        sha2::block_api::compress256(&mut state, std::slice::from_ref(&last));
        last = [0; 64];
    }
    last[56..].copy_from_slice(&((data.len() as u64) << 3).to_le_bytes());
    sha2::block_api::compress256(&mut state, std::slice::from_ref(&last));
    for (b, w) in last.iter_mut().zip(state) {
        *b = w as u8;
    }
    out.copy_from_slice(&last);
}

/// fio 3.33's sha512 field (128 bytes): the hash is never finalised and the field is the
/// context's 128-byte block buffer: the data's first 128 bytes, over which the last
/// `len % 128` bytes were copied. With `len < 128` the rest of the buffer is whatever fio's
/// stack held (fio fails its own check there); this crate uses zeros.
fn sha512_quirk(data: &[u8], out: &mut [u8]) {
    out.fill(0);
    let head = data.len().min(128);
    out[..head].copy_from_slice(&data[..head]);
    if data.len() >= 128 {
        let r = data.len() % 128;
        out[..r].copy_from_slice(&data[data.len() - r..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_values() {
        let s = b"123456789";
        assert_eq!(fio_crc32c(s), 0x1cf9_6d7c);
        assert_eq!(CRC32.checksum(s), 0x89a1_897f);
        assert_eq!(CRC64.checksum(s), 0xe9c6_d914_c4b8_d9ca);
        assert_eq!(CRC16.checksum(s), 0xbb3d);
        assert_eq!(CRC7.checksum(s), 0x75);
    }
}
