//! A tiny WebAssembly binary reader: just enough to list a module's imports and the size of each
//! function, so the build can fail when the `.wasm` imports anything from `env` (an unresolved
//! native symbol: it would fail to instantiate in the browser) or holds a function too large for
//! V8 to optimise cheaply.

use std::path::Path;

use anyhow::{bail, ensure, Context, Result};

const MAGIC: &[u8] = b"\0asm";
const IMPORT_SECTION: u8 = 2;
const CODE_SECTION: u8 = 10;

/// The largest function body the page may hold, in bytes. V8 optimises a hot function on a
/// background thread, at a cost that grows faster than its size: with wasm-opt inlining every
/// function that has one caller, the node's event loop became one 131,623-byte function, and the
/// largest single optimisation in each visit took 420-690 ms of a 2-core machine's CPU while the
/// page fetched (Chrome's traces, which do not name the function; 204-244 ms once it was split).
/// `public/index.html` caps that inlining; the largest body is now about 65,000 bytes.
pub const MAX_FUNCTION_BYTES: usize = 96 * 1024;

/// One import: the module it comes from and the field name.
#[derive(Debug, PartialEq, Eq)]
pub struct Import {
    pub module: String,
    pub name: String,
}

/// Every import of the wasm module in `bytes`.
pub fn imports(bytes: &[u8]) -> Result<Vec<Import>> {
    let mut found = Vec::new();
    for (id, body) in sections(bytes)? {
        if id == IMPORT_SECTION {
            found.extend(import_section(body)?);
        }
    }
    Ok(found)
}

/// The size in bytes of each function body defined in the module in `bytes`, in order.
pub fn function_sizes(bytes: &[u8]) -> Result<Vec<usize>> {
    let mut sizes = Vec::new();
    for (id, body) in sections(bytes)? {
        if id == CODE_SECTION {
            let mut reader = Reader { bytes: body, pos: 0 };
            for _ in 0..reader.leb128()? {
                let size = usize::try_from(reader.leb128()?)?;
                reader.take(size)?;
                sizes.push(size);
            }
        }
    }
    Ok(sizes)
}

/// The module's sections, as (id, body).
fn sections(bytes: &[u8]) -> Result<Vec<(u8, &[u8])>> {
    ensure!(bytes.len() >= 8 && &bytes[..4] == MAGIC, "not a wasm module (bad magic)");
    ensure!(bytes[4..8] == [1, 0, 0, 0], "unsupported wasm version {:?}", &bytes[4..8]);
    let mut reader = Reader { bytes, pos: 8 };
    let mut found = Vec::new();
    while reader.pos < bytes.len() {
        let id = reader.byte()?;
        let size = usize::try_from(reader.leb128()?)?;
        found.push((id, reader.take(size)?));
    }
    Ok(found)
}

fn import_section(body: &[u8]) -> Result<Vec<Import>> {
    let mut reader = Reader { bytes: body, pos: 0 };
    let count = reader.leb128()?;
    let mut found = Vec::new();
    for _ in 0..count {
        let module = reader.name()?;
        let name = reader.name()?;
        match reader.byte()? {
            0 => {
                reader.leb128()?; // function: type index
            }
            1 => {
                reader.byte()?; // table: element type, then limits
                reader.limits()?;
            }
            2 => reader.limits()?, // memory
            3 => {
                reader.byte()?; // global: value type, mutability
                reader.byte()?;
            }
            4 => {
                reader.byte()?; // tag: attribute, type index
                reader.leb128()?;
            }
            kind => bail!("unknown import kind {kind} for {module}.{name}"),
        }
        found.push(Import { module, name });
    }
    Ok(found)
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn byte(&mut self) -> Result<u8> {
        let byte = *self.bytes.get(self.pos).context("wasm module truncated")?;
        self.pos += 1;
        Ok(byte)
    }

    fn take(&mut self, len: usize) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(len).filter(|&end| end <= self.bytes.len());
        let end = end.context("wasm section or name runs past the end")?;
        let slice = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(slice)
    }

    /// An unsigned LEB128 integer of at most 64 bits.
    fn leb128(&mut self) -> Result<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.byte()?;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        bail!("LEB128 integer too long")
    }

    fn name(&mut self) -> Result<String> {
        let len = usize::try_from(self.leb128()?)?;
        Ok(String::from_utf8(self.take(len)?.to_vec())?)
    }

    fn limits(&mut self) -> Result<()> {
        let flags = self.byte()?;
        self.leb128()?;
        if flags & 1 != 0 {
            self.leb128()?;
        }
        Ok(())
    }
}

/// Fails if the module in `bytes` imports anything from `env`.
pub fn check_no_env_imports(bytes: &[u8]) -> Result<()> {
    let env: Vec<String> =
        imports(bytes)?.into_iter().filter(|i| i.module == "env").map(|i| i.name).collect();
    ensure!(
        env.is_empty(),
        "imports from \"env\" (native symbols the browser cannot provide): {}",
        env.join(", ")
    );
    Ok(())
}

/// Fails if a function in the module in `bytes` is larger than [`MAX_FUNCTION_BYTES`].
pub fn check_function_sizes(bytes: &[u8]) -> Result<()> {
    let sizes = function_sizes(bytes)?;
    let largest = sizes.iter().enumerate().max_by_key(|(_, size)| **size);
    if let Some((index, &size)) = largest {
        ensure!(
            size <= MAX_FUNCTION_BYTES,
            "function {index} (counted from the first defined) is {size} bytes, over the \
             {MAX_FUNCTION_BYTES}-byte budget: V8 optimises it slowly in every visit (see \
             wasm-opt's --one-caller-inline-max-function-size in public/index.html)"
        );
    }
    Ok(())
}

/// Checks every `*.wasm` directly in `dir`; with none there, prints a note and passes.
pub fn check_dir(dir: &Path) -> Result<()> {
    let mut checked = 0;
    if let Ok(entries) = std::fs::read_dir(dir) {
        for path in entries.flatten().map(|e| e.path()) {
            if path.extension().is_some_and(|e| e == "wasm") {
                let bytes = std::fs::read(&path)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                check_no_env_imports(&bytes)
                    .and_then(|()| check_function_sizes(&bytes))
                    .with_context(|| format!("{}", path.display()))?;
                checked += 1;
            }
        }
    }
    if checked == 0 {
        println!("note: no .wasm in {}; the wasm checks were skipped", dir.display());
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A module importing `module.name` as a function of type 0 and `js.mem` as a memory.
    pub fn module_importing(module: &str, name: &str) -> Vec<u8> {
        let mut imports = vec![2];
        for (m, n, desc) in [(module, name, &[0u8, 0][..]), ("js", "mem", &[2, 1, 1, 2][..])] {
            imports.push(m.len() as u8);
            imports.extend(m.bytes());
            imports.push(n.len() as u8);
            imports.extend(n.bytes());
            imports.extend(desc);
        }
        let mut bytes = b"\0asm\x01\0\0\0".to_vec();
        bytes.extend([1, 4, 1, 0x60, 0, 0]); // type section: one `() -> ()`
        bytes.extend([IMPORT_SECTION, imports.len() as u8]);
        bytes.extend(imports);
        bytes.extend([0, 3, 1, b'x', 9]); // a custom section
        bytes
    }

    #[test]
    fn lists_imports() {
        let found = imports(&module_importing("wbg", "__wbg_log")).unwrap();
        assert_eq!(
            found,
            [
                Import { module: "wbg".into(), name: "__wbg_log".into() },
                Import { module: "js".into(), name: "mem".into() }
            ]
        );
        assert!(check_no_env_imports(&module_importing("wbg", "f")).is_ok());
    }

    #[test]
    fn flags_env_imports() {
        let err = check_no_env_imports(&module_importing("env", "memcpy")).unwrap_err();
        assert!(err.to_string().contains("memcpy"), "{err}");
    }

    /// A module whose code section holds one function body of `size` bytes.
    fn module_with_function_of(size: usize) -> Vec<u8> {
        let mut body = leb128(size);
        body.extend(std::iter::repeat_n(0, size));
        let mut code = leb128(1);
        code.extend(body);
        let mut bytes = b"\0asm\x01\0\0\0".to_vec();
        bytes.push(CODE_SECTION);
        bytes.extend(leb128(code.len()));
        bytes.extend(code);
        bytes
    }

    fn leb128(mut value: usize) -> Vec<u8> {
        let mut out = Vec::new();
        loop {
            let byte = (value & 0x7f) as u8;
            value >>= 7;
            if value == 0 {
                out.push(byte);
                return out;
            }
            out.push(byte | 0x80);
        }
    }

    #[test]
    fn measures_function_bodies_against_the_budget() {
        assert_eq!(function_sizes(&module_with_function_of(300)).unwrap(), [300]);
        assert!(check_function_sizes(&module_with_function_of(MAX_FUNCTION_BYTES)).is_ok());
        let err = check_function_sizes(&module_with_function_of(MAX_FUNCTION_BYTES + 1));
        assert!(err.unwrap_err().to_string().contains("over the"));
        assert!(function_sizes(&module_importing("wbg", "f")).unwrap().is_empty());
    }

    #[test]
    fn rejects_malformed_modules() {
        assert!(imports(b"\0asm\x02\0\0\0").is_err());
        assert!(imports(b"notwasm!").is_err());
        let mut truncated = module_importing("env", "f");
        truncated.truncate(20);
        assert!(imports(&truncated).is_err());
    }

    #[test]
    fn leb128_reads_multi_byte_values() {
        let mut reader = Reader { bytes: &[0xe5, 0x8e, 0x26], pos: 0 };
        assert_eq!(reader.leb128().unwrap(), 624_485);
    }
}
