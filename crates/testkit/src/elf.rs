//! What the tests of the static executables and their packages read of an ELF file: its machine
//! and whether it is dynamically linked.

use std::path::Path;

/// `e_machine` of an x86_64 executable.
pub const EM_X86_64: u16 = 62;
/// `e_machine` of an aarch64 executable.
pub const EM_AARCH64: u16 = 183;
/// The program header that names the program interpreter (the dynamic loader).
const PT_INTERP: u32 = 3;

/// The ELF machine of a 64-bit little-endian executable, and whether it names a program
/// interpreter (the dynamic loader, which a static executable has none of). Panics on anything
/// else.
pub fn elf_facts(path: &Path) -> (u16, bool) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(&bytes[..4], b"\x7fELF", "{} is no ELF file", path.display());
    assert_eq!(bytes[4], 2, "{}: not a 64-bit ELF file", path.display());
    assert_eq!(bytes[5], 1, "{}: not little-endian", path.display());
    let u16_at = |o: usize| u16::from_le_bytes([bytes[o], bytes[o + 1]]);
    let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().expect("4 bytes"));
    let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().expect("8 bytes"));
    let machine = u16_at(0x12);
    let phoff = usize::try_from(u64_at(0x20)).expect("offset");
    let phentsize = usize::from(u16_at(0x36));
    let phnum = usize::from(u16_at(0x38));
    let interp = (0..phnum).any(|i| u32_at(phoff + i * phentsize) == PT_INTERP);
    (machine, interp)
}
